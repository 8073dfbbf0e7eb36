import { describe, expect, it } from "vitest";
import { pendingWork } from "../../src/runtime/node/pending-work.js";

/** A promise and its resolve and reject. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe("pending work", () => {
  it("is settled at once when nothing was tracked", async () => {
    await pendingWork().settled();
  });

  it("settles once every tracked piece has, failed ones too, and hands each piece back as it is", async () => {
    const work = pendingWork();
    const first = deferred();
    const second = deferred();
    expect(work.track(first.promise)).toBe(first.promise);
    const failing = work.track(second.promise);
    failing.catch(() => undefined);
    let settled = false;
    const waiting = work.settled().then(() => {
      settled = true;
    });
    first.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    second.reject(new Error("failed"));
    await waiting;
    expect(settled).toBe(true);
  });

  it("waits for work tracked while it waits, as a record written after its call's answer", async () => {
    const work = pendingWork();
    const call = deferred();
    const record = deferred();
    work.track(call.promise.then(() => void work.track(record.promise)));
    let settled = false;
    const waiting = work.settled().then(() => {
      settled = true;
    });
    call.resolve();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    record.resolve();
    await waiting;
    expect(settled).toBe(true);
    // And again, for a second shutdown's wait.
    await work.settled();
  });
});
