import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { deduplicatedSignals } from "../../src/runtime/node/cli/process-signals.js";

function clockedSignals() {
  const source = new EventEmitter();
  let now = 1_000;
  const signals = deduplicatedSignals(source, 200, () => now);
  const received: string[] = [];
  signals.on("SIGINT", (signal: string) => received.push(signal));
  signals.on("SIGTERM", (signal: string) => received.push(signal));
  return { source, received, advance: (ms: number) => (now += ms) };
}

describe("the signals the gateway stops on", () => {
  it("count a signal delivered twice at once (terminal and npm) as one", () => {
    const { source, received } = clockedSignals();
    source.emit("SIGINT");
    source.emit("SIGINT");
    expect(received).toEqual(["SIGINT"]);
  });

  it("pass a repeat that comes later, which cuts the drain short", () => {
    const { source, received, advance } = clockedSignals();
    source.emit("SIGINT");
    advance(150);
    source.emit("SIGINT");
    advance(250);
    source.emit("SIGINT");
    expect(received).toEqual(["SIGINT", "SIGINT"]);
  });

  it("pass different signals at once", () => {
    const { source, received } = clockedSignals();
    source.emit("SIGTERM");
    source.emit("SIGINT");
    expect(received).toEqual(["SIGTERM", "SIGINT"]);
  });
});
