import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import Database from "better-sqlite3";
import { Client } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { upstreamEnvironment } from "../support/gateway-process.js";
import { tempDatabase } from "../support/temp-state.js";

/** A gateway in its own process, started as `npm start` starts it. */
interface Child {
  url: string;
  process: ChildProcess;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  // The whole process group: SIGKILL does not reach the gateway that the tsx CLI runs as its child.
  for (const child of children.splice(0)) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Ended already.
    }
  }
});

/**
 * Runs `src/runtime/node/main.ts` through the tsx CLI, as `npm start` does (so a signal reaches the
 * gateway through tsx's relay), or, with `openFiles`, as one Node process under `ulimit -n`.
 */
function spawnGateway(environment: Record<string, string>, openFiles?: number): ChildProcess {
  const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", PROMPTGATE_LOG: "silent", ...environment };
  const child =
    openFiles === undefined
      ? spawn(process.execPath, ["node_modules/tsx/dist/cli.mjs", "src/runtime/node/main.ts"], { env, detached: true })
      : spawn(
          "/bin/sh",
          ["-c", `ulimit -n ${openFiles} && exec "$0" --import tsx src/runtime/node/main.ts`, process.execPath],
          { env, detached: true },
        );
  children.push(child);
  return child;
}

function started(child: ChildProcess): Promise<Child> {
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const url = /promptgate listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined) resolve({ url, process: child, stderr: () => stderr, exited });
    });
    void exited.then((code) => reject(new Error(`The gateway exited with ${code} before listening: ${stderr}`)));
  });
}

async function startGateway(environment: Record<string, string>, openFiles?: number): Promise<Child> {
  return started(spawnGateway(environment, openFiles));
}

/** Ends the process and resolves with its exit code and everything it wrote to stderr. */
async function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
  return { code, stderr };
}

/** Opens `count` connections that send the start of a request and never finish its headers. */
async function holdHalfOpen(url: string, count: number): Promise<Socket[]> {
  const { port } = new URL(url);
  const sockets: Socket[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(Number(port), "127.0.0.1", () => {
            socket.write("POST /openai/v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n");
            resolve();
          });
          // A connection the gateway refuses at its cap ends here; the test keeps its end all the same.
          socket.on("error", () => resolve());
          sockets.push(socket);
        }),
    ),
  );
  return sockets;
}

/** The soft limit on open files of this process (Node raises it to the hard limit at start), where Linux tells it. */
function ownOpenFileLimit(): number | undefined {
  if (!existsSync("/proc/self/limits")) return undefined;
  const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1]);
  return Number.isFinite(limit) ? limit : undefined;
}

const chatBody = JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }] });
const chatRequest = {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
};

const completion = JSON.stringify({
  id: "chatcmpl-slow",
  object: "chat.completion",
  created: 1,
  model: "gpt-test",
  choices: [{ index: 0, message: { role: "assistant", content: "a slow answer" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
});

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());
afterEach(() => upstream.answerWith(undefined));

/** Answers every upstream call with `completion` after `ms`. */
function answerAfter(ms: number): void {
  upstream.answerWith((_request, response) => {
    const timer = setTimeout(() => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(completion);
    }, ms);
    response.once("close", () => clearTimeout(timer));
  });
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("The condition did not hold in time.");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("2,000 connections that never finish their headers", () => {
  // The gateway runs under `ulimit -n 1024`, fewer files than the connections held: without a
  // connection cap it runs out of files, and without a short header timeout it frees none for a
  // minute. The test process holds the client ends (Node raised its own limit to the hard one).
  // Each test has a gateway of its own: any connection that closes frees a file, and would let
  // an unguarded gateway pass.
  const held = 2_000;
  const gatewayFiles = 1_024;
  let sockets: Socket[] = [];
  beforeAll(() => {
    const limit = ownOpenFileLimit();
    if (limit !== undefined && limit < held + 500) {
      throw new Error(
        `These tests hold ${held} connections; raise the open-file limit (ulimit -n) above ${held + 500}.`,
      );
    }
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  it("keep /healthz from new clients unanswered no longer than the header timeout", async () => {
    const gateway = await startGateway(
      { PROMPTGATE_DB: "memory", PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "1" },
      gatewayFiles,
    );
    sockets = await holdHalfOpen(gateway.url, held);
    expect(sockets).toHaveLength(held);
    const flooded = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - flooded < 10_000) {
      status = await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(500) }).then(
        (response) => response.status,
        () => 0,
      );
    }
    expect(status).toBe(200);
    expect(Date.now() - flooded).toBeLessThan(5_000);
    expect(gateway.stderr()).toContain("PROMPTGATE_MAX_CONNECTIONS");
  });

  it("leave the gateway files for the upstream calls of clients already connected", async () => {
    const gateway = await startGateway({ PROMPTGATE_DB: "memory", ...upstreamEnvironment(upstream) }, gatewayFiles);
    const connected = new Client(gateway.url);
    try {
      expect((await connected.request({ method: "GET", path: "/healthz" })).statusCode).toBe(200);
      sockets = await holdHalfOpen(gateway.url, held);
      const answer = await connected.request({ path: "/openai/v1/chat/completions", ...chatRequest, body: chatBody });
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.text()).toContain("chat.completion");
    } finally {
      await connected.destroy();
    }
  });
});

describe("a port already in use", () => {
  let occupied: Server;
  let port = 0;
  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, "127.0.0.1", resolve));
    port = (occupied.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => occupied.close(() => resolve())));

  it("stops start-up with one line naming the port and the variable, closes the store and exits non-zero", async () => {
    const database = tempDatabase();
    const { code, stderr } = await exitOf(spawnGateway({ PORT: String(port), PROMPTGATE_DB: database }));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^promptgate cannot start: .*/);
    expect(stderr).toContain(`port ${port}`);
    expect(stderr).toContain("PORT");
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    // A closed SQLite store checkpoints and removes its write-ahead log; an abandoned one leaves it.
    expect(existsSync(database)).toBe(true);
    expect(existsSync(`${database}-wal`)).toBe(false);
  });
});

describe("SIGTERM", () => {
  it("lets a call in flight finish and record, answers /readyz 503 meanwhile, refuses new connections and exits 0", async () => {
    answerAfter(1_500);
    const database = tempDatabase();
    const gateway = await startGateway({ ...upstreamEnvironment(upstream), PROMPTGATE_DB: database });
    const kept = new Client(gateway.url);
    try {
      expect((await kept.request({ method: "GET", path: "/readyz" })).statusCode).toBe(200);
      const received = upstream.received.length;
      const call = fetch(`${gateway.url}/openai/v1/chat/completions`, { ...chatRequest, body: chatBody });
      await until(() => upstream.received.length > received);

      gateway.process.kill("SIGTERM");
      let readiness = 200;
      while (readiness === 200) {
        readiness = (await kept.request({ method: "GET", path: "/readyz" })).statusCode;
        if (readiness === 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(readiness).toBe(503);
      const fresh = new Client(gateway.url);
      await expect(fresh.request({ method: "GET", path: "/healthz" })).rejects.toMatchObject({
        code: "ECONNREFUSED",
      });
      await fresh.destroy();

      const answer = await call;
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("a slow answer");
      const ref = answer.headers.get("x-promptgate-ref");

      expect(await gateway.exited).toBe(0);
      expect(gateway.stderr()).toMatch(/promptgate stopped on SIGTERM after [\d.]+ s: .*finished; records committed\./);
      const reader = new Database(database, { readonly: true });
      const row = reader.prepare("SELECT record FROM calls WHERE ref = ?").get(ref) as { record: string } | undefined;
      reader.close();
      expect(JSON.parse(row?.record ?? "{}")).toMatchObject({ ref, decision: "sent", upstream_status: 200 });
    } finally {
      await kept.destroy();
    }
  });

  it("cuts off what is still in flight after PROMPTGATE_DRAIN_SECONDS, records it and exits 0", async () => {
    answerAfter(60_000);
    const database = tempDatabase();
    const gateway = await startGateway({
      ...upstreamEnvironment(upstream),
      PROMPTGATE_DB: database,
      PROMPTGATE_DRAIN_SECONDS: "1",
    });
    const received = upstream.received.length;
    const call = fetch(`${gateway.url}/openai/v1/chat/completions`, { ...chatRequest, body: chatBody }).then(
      (response) => response.status,
      () => "cut off",
    );
    await until(() => upstream.received.length > received);
    const signalled = Date.now();
    gateway.process.kill("SIGTERM");

    expect(await call).toBe("cut off");
    expect(await gateway.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5_000);
    expect(gateway.stderr()).toContain("1 cut off at the 1 s drain limit");
    const reader = new Database(database, { readonly: true });
    const rows = reader.prepare("SELECT record FROM calls").all() as Array<{ record: string }>;
    reader.close();
    expect(rows.map((row) => JSON.parse(row.record))).toMatchObject([{ decision: "cancelled" }]);
  });
});
