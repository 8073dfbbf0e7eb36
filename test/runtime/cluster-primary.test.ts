import type { Worker } from "node:cluster";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type PrimaryCluster, runPrimary } from "../../src/runtime/node/cluster-primary.js";

// The primary's bookkeeping with a stand-in for `node:cluster`: which workers it stops, when it restarts one, and
// when it resolves. Node keeps a worker in `cluster.workers` until its IPC channel closed too, which may come after
// its `exit` event; the stand-in has no `workers` map at all, so the primary can only count its workers itself.

interface FakeWorker {
  process: { pid: number; kill(signal: NodeJS.Signals): void };
}

function fakeCluster() {
  const emitter = new EventEmitter();
  const forked: FakeWorker[] = [];
  const kills: Array<[number, NodeJS.Signals]> = [];
  const fork = () => {
    const pid = 100 + forked.length;
    const worker: FakeWorker = { process: { pid, kill: (signal) => void kills.push([pid, signal]) } };
    forked.push(worker);
    return worker as unknown as Worker;
  };
  const cluster = { fork, on: emitter.on.bind(emitter) } as unknown as PrimaryCluster;
  const emit = (
    event: "listening" | "exit",
    worker: FakeWorker,
    code: number | null = 0,
    signal: string | null = null,
  ) => emitter.emit(event, worker, ...(event === "exit" ? [code, signal] : [{}]));
  return { cluster, forked, kills, emit };
}

function primaryIo() {
  const signals = new EventEmitter();
  const lines: string[] = [];
  return {
    signals,
    lines,
    io: { stderr: (text: string) => void lines.push(text), signals, hangups: new EventEmitter() },
  };
}

/** Whether `promise` has settled once pending callbacks ran, and with what. */
async function settled<T>(promise: Promise<T>): Promise<{ value: T } | "pending"> {
  const pending = Symbol("pending");
  const value = await Promise.race([
    promise,
    new Promise<typeof pending>((resolve) => setImmediate(() => resolve(pending))),
  ]);
  return value === pending ? "pending" : { value: value as T };
}

describe("the cluster primary", () => {
  it("stops every worker on SIGTERM and resolves 0 only after the last one exited", async () => {
    const fake = fakeCluster();
    const { signals, io } = primaryIo();
    const exit = runPrimary(2, {}, io, fake.cluster);
    const [first, second] = fake.forked as [FakeWorker, FakeWorker];
    fake.emit("listening", first);
    fake.emit("listening", second);
    signals.emit("SIGTERM");
    expect(fake.kills).toEqual([
      [100, "SIGTERM"],
      [101, "SIGTERM"],
    ]);
    fake.emit("exit", first);
    expect(await settled(exit)).toBe("pending");
    fake.emit("exit", second);
    expect(await settled(exit)).toEqual({ value: 0 });
  });

  it("restarts a worker that dies after it listened, and stops the replacement too", async () => {
    const fake = fakeCluster();
    const { signals, lines, io } = primaryIo();
    const exit = runPrimary(2, {}, io, fake.cluster);
    const [first, second] = fake.forked as [FakeWorker, FakeWorker];
    fake.emit("listening", first);
    fake.emit("listening", second);
    fake.emit("exit", first, null, "SIGKILL");
    expect(lines.at(-1)).toBe("promptgate worker 100 ended (SIGKILL); starting another.\n");
    const replacement = fake.forked[2] as FakeWorker;
    fake.emit("listening", replacement);
    signals.emit("SIGTERM");
    expect(fake.kills.map(([pid]) => pid)).toEqual([101, 102]);
    fake.emit("exit", second);
    expect(await settled(exit)).toBe("pending");
    fake.emit("exit", replacement, 1);
    expect(await settled(exit)).toEqual({ value: 1 });
  });

  it("ends with 1 when a worker ends before it listened, once the others stopped", async () => {
    const fake = fakeCluster();
    const { lines, io } = primaryIo();
    const exit = runPrimary(2, {}, io, fake.cluster);
    const [first, second] = fake.forked as [FakeWorker, FakeWorker];
    fake.emit("exit", first, 1);
    expect(lines).toEqual(["promptgate cannot start: worker 100 ended (code 1) before it listened.\n"]);
    expect(fake.kills).toEqual([[101, "SIGTERM"]]);
    expect(await settled(exit)).toBe("pending");
    fake.emit("exit", second, 0);
    expect(await settled(exit)).toEqual({ value: 1 });
  });
});
