import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import type { Shutdown } from "../../src/runtime/node/node-gateway.js";
import { describeShutdown, stopGateway, stopOnSignals } from "../../src/runtime/node/stop-on-signals.js";

/** A stand-in gateway whose shutdown settles as the test says, and which notes the drains it was asked for. */
function gatewayStub(settle: () => Promise<Shutdown>) {
  const drains: Array<number | undefined> = [];
  let outcome: Promise<Shutdown> | undefined;
  return {
    drains,
    config: readConfig({}),
    shutdown(drainMs?: number) {
      drains.push(drainMs);
      outcome ??= settle();
      return outcome;
    },
  };
}

function exitRecorder() {
  const lines: string[] = [];
  const codes: number[] = [];
  const exit = { write: (line: string) => void lines.push(line), exit: (code: number) => void codes.push(code) };
  return { lines, code: () => codes.at(-1), exit };
}

describe("stopping the gateway process", () => {
  it("exits 0 after the drain, with one line saying what it let finish", async () => {
    const gateway = gatewayStub(async () => ({ requests: 2, cutOff: 0, elapsedMs: 4_900 }));
    const recorder = exitRecorder();
    await stopGateway(gateway, "SIGTERM", recorder.exit);
    expect(recorder.code()).toBe(0);
    expect(recorder.lines).toEqual([
      "promptgate stopped on SIGTERM after 4.9 s: 2 requests in flight finished; records committed.",
    ]);
  });

  it("exits 1 with a message when the store cannot be closed", async () => {
    const gateway = gatewayStub(async () => {
      throw new Error("database is locked");
    });
    const recorder = exitRecorder();
    await stopGateway(gateway, "SIGINT", recorder.exit);
    expect(recorder.code()).toBe(1);
    expect(recorder.lines).toEqual([
      "promptgate stopped on SIGINT, but its state store could not be closed: database is locked",
    ]);
  });

  it("drains on SIGTERM or SIGINT for PROMPTGATE_DRAIN_SECONDS, and cuts the drain short on a second signal", async () => {
    let finish = (_shutdown: Shutdown) => {};
    const gateway = gatewayStub(() => new Promise((resolve) => (finish = resolve)));
    const recorder = exitRecorder();
    const signals = new EventEmitter();
    stopOnSignals(gateway, recorder.exit, signals);
    signals.emit("SIGINT", "SIGINT");
    expect(gateway.drains).toEqual([undefined]);
    signals.emit("SIGTERM", "SIGTERM");
    expect(gateway.drains).toEqual([undefined, 0]);
    finish({ requests: 1, cutOff: 1, elapsedMs: 200 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.code()).toBe(0);
    expect(recorder.lines).toHaveLength(1);
    expect(recorder.lines[0]).toMatch(/^promptgate stopped on SIGINT after 0\.2 s: /);
  });
});

describe("the shutdown line", () => {
  it("says when nothing was in flight", () => {
    expect(describeShutdown("SIGINT", { requests: 0, cutOff: 0, elapsedMs: 12 }, 30_000)).toBe(
      "promptgate stopped on SIGINT after 0.0 s: no requests were in flight; records committed.",
    );
  });

  it("counts the requests cut off at the drain limit and names its variable", () => {
    expect(describeShutdown("SIGTERM", { requests: 3, cutOff: 1, elapsedMs: 30_004 }, 30_000)).toBe(
      "promptgate stopped on SIGTERM after 30.0 s: 2 of 3 requests in flight finished, 1 cut off at the 30 s drain limit (PROMPTGATE_DRAIN_SECONDS); records committed.",
    );
  });
});
