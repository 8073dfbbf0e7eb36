import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { typeScriptWorkerEntry } from "../../src/runtime/node/schema-compiler.js";
import { terminateOutsideLock } from "../../src/runtime/node/termination-lock.js";

// The lock that keeps the schema compiler from terminating its worker while V8 compiles a validator's code (Node 20
// can crash the process then). Checked with a real worker thread, and counts kept in shared memory, not messages:
// a message posted just before a thread is terminated may never arrive.

/** Runs test/fixtures/schema-compiler/lock-holder.ts in a worker thread, its TypeScript through tsx. */
function lockHolder(shared: Int32Array): { worker: Worker; exited: Promise<number>; began: Promise<unknown> } {
  const entry = typeScriptWorkerEntry(new URL("../fixtures/schema-compiler/lock-holder.ts", import.meta.url));
  const worker = new Worker(entry, {
    execArgv: [],
    workerData: shared.buffer,
  });
  return {
    worker,
    exited: new Promise((resolve) => worker.once("exit", resolve)),
    began: new Promise((resolve) => worker.once("message", resolve)),
  };
}

function sharedCounts(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
}

describe("terminateOutsideLock", () => {
  it("waits while the worker holds the lock, then terminates it before it can take the lock again", async () => {
    const shared = sharedCounts();
    const { worker, exited, began } = lockHolder(shared);
    await began;
    let terminated = false;
    const termination = terminateOutsideLock(worker, shared.subarray(0, 1)).then(() => {
      terminated = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(terminated).toBe(false);
    // The first piece may end now.
    Atomics.store(shared, 3, 1);
    Atomics.notify(shared, 3);
    await termination;
    await exited;
    // It ran to its end, and no other piece began after it, though the worker tried at once.
    expect([Atomics.load(shared, 2), Atomics.load(shared, 1)]).toEqual([1, 1]);
  });

  it("terminates a worker that takes and leaves the lock without pause", async () => {
    const shared = sharedCounts();
    const { worker, exited, began } = lockHolder(shared);
    await began;
    Atomics.store(shared, 3, 1);
    Atomics.notify(shared, 3);
    // The worker now takes and leaves the lock without pause; it is terminated all the same.
    await terminateOutsideLock(worker, shared.subarray(0, 1));
    await exited;
    expect(Atomics.load(shared, 2) - Atomics.load(shared, 1)).toBe(0);
  });

  it("does not wait for a lock that a thread which has ended left held", async () => {
    const lock = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    Atomics.store(lock, 0, 1); // held
    const worker = new Worker("", { eval: true });
    await new Promise((resolve) => worker.once("exit", resolve));
    await terminateOutsideLock(worker, lock);
  });
});
