import { type ChildProcess, spawn } from "node:child_process";
import type { ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

// The stage timeouts of contract section 11 through the openai SDK, against a fake upstream that stalls at each stage;
// a policy sets each to 1 s, its deadline to 30 s, so that what fires is the stage's timeout, not the deadline.

const adminKey = "timeouts-admin-key";
const shortTimeouts = `name = "timeouts.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 30
connect_seconds = 1
first_byte_seconds = 1
idle_seconds = 1
`;

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "timeouts.short.toml": shortTimeouts }),
    PROMPTGATE_ADMIN_KEY: adminKey,
  });
});
afterAll(() => harness.close());
beforeEach(() => harness.upstream.answerWith(undefined));

/** A bounded wait: fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Makes the fake upstream run `start` on each request and then say nothing more; resolves when its connection goes. */
function stallUpstream(start?: (response: ServerResponse) => void): Promise<void> {
  return new Promise((closed) => {
    harness.upstream.answerWith((_request, response) => {
      response.once("close", () => closed());
      start?.(response);
    });
  });
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

async function recordOf(ref: string | null): Promise<CallRecord> {
  // The record of a stream is written at its end, which may come a moment after the client saw it.
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (response.status === 200) return (await response.json()) as CallRecord;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no record for ${ref}`);
}

/** The log line of the call `ref`. */
function logLineOf(ref: string | null): Record<string, unknown> | undefined {
  return harness.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.ref === ref);
}

const client = () =>
  new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/timeouts.short/openai/v1`,
    maxRetries: 0,
  });
const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };
const event = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe("the first-byte timeout", () => {
  it("gives a streamed call whose provider never sends its head the native 504 timeout, recorded as first_byte", async () => {
    const closed = stallUpstream();
    const started = Date.now();
    const error = await within(rejectionOf(client().chat.completions.create({ ...chat, stream: true })), 10_000, "it");
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const timeout = error as InstanceType<typeof OpenAI.InternalServerError>;
    expect(timeout.status).toBe(504);
    expect(timeout.error).toMatchObject({ code: "timeout", promptgate: { code: "timeout", retryable: true } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(5_000);
    await within(closed, 2_000, "the upstream call to be aborted");
    const ref = timeout.headers?.get("x-promptgate-ref") ?? null;
    const record = await recordOf(ref);
    expect(record).toMatchObject({
      error: "timeout",
      upstream_timeout: "first_byte",
      upstream_error: { class: "timeout", reason: "first_byte_timeout" },
    });
    await expect.poll(() => logLineOf(ref)).toMatchObject({ error: "timeout", upstream_reason: "first_byte_timeout" });
  });

  it("does not bound a non-streamed call, whose answer arrives whole within the deadline", async () => {
    harness.upstream.answerWith((_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            id: "chatcmpl-late",
            object: "chat.completion",
            created: 0,
            model: "gpt-test",
            choices: [{ index: 0, message: { role: "assistant", content: "late" }, finish_reason: "stop" }],
          }),
        );
      }, 1_600);
    });
    const completion = await within(client().chat.completions.create(chat), 10_000, "the answer");
    expect(completion.choices[0]?.message.content).toBe("late");
  });
});

describe("the idle timeout", () => {
  it("ends a stream that stops between events with the native error event, recorded as idle", async () => {
    const closed = stallUpstream((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(event("first"));
      setTimeout(() => response.write(event("second")), 600);
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...chat, stream: true })
      .withResponse();
    const texts: string[] = [];
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? "");
        })(),
      ),
      10_000,
      "the stream to end",
    );
    // 600 ms between the first two events is within the timeout; the silence after the second is not.
    expect(texts).toEqual(["first", "second"]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: "timeout",
      promptgate: { code: "timeout", retryable: true },
    });
    await within(closed, 2_000, "the upstream stream to be aborted");
    const ref = response.headers.get("x-promptgate-ref");
    expect(await recordOf(ref)).toMatchObject({
      error: "timeout",
      upstream_timeout: "idle",
      upstream_error: { class: "timeout", reason: "idle_timeout" },
    });
  });

  it("ends a stream whose head came without an event the same way", async () => {
    const closed = stallUpstream((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.flushHeaders();
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...chat, stream: true })
      .withResponse();
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const _ of stream);
        })(),
      ),
      10_000,
      "the stream to end",
    );
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "timeout" });
    await within(closed, 2_000, "the upstream stream to be aborted");
    expect(await recordOf(response.headers.get("x-promptgate-ref"))).toMatchObject({ upstream_timeout: "idle" });
  });
});

/**
 * A listener on loopback whose connections cannot open: a process that listens with a backlog of 1 and then blocks,
 * never accepting, once two connections have filled its queue (Linux queues backlog + 1; Node takes a backlog of 0
 * for its default). The kernel drops further connection attempts, which wait as they would for an unreachable host.
 */
async function unopenableListener(): Promise<{ origin: string; close: () => void }> {
  const listener: ChildProcess = spawn(process.execPath, [
    "-e",
    `const server = require("node:net").createServer().listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
      process.stdout.write(server.address().port + "\\n");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
    });`,
  ]);
  const port = await new Promise<number>((resolve, reject) => {
    listener.stdout?.once("data", (data: Buffer) => resolve(Number(String(data).trim())));
    listener.once("error", reject);
  });
  const fillers: Socket[] = [];
  for (let filled = 0; filled < 2; filled++) {
    fillers.push(
      await new Promise<Socket>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => resolve(socket));
        socket.once("error", reject);
      }),
    );
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => {
      for (const filler of fillers) filler.destroy();
      listener.kill();
    },
  };
}

describe("the connect timeout", () => {
  it("gives a call whose provider connection never opens the native 504 timeout, recorded as connect", async () => {
    const listener = await unopenableListener();
    const gateway = await startGatewayUnderTest({
      PROMPTGATE_POLICIES: copyPolicies({ "timeouts.short.toml": shortTimeouts }),
      PROMPTGATE_ADMIN_KEY: adminKey,
      PROMPTGATE_UPSTREAM_OPENAI: `${listener.origin}/v1`,
    });
    try {
      const started = Date.now();
      const unreachable = new OpenAI({
        apiKey: "sk-client",
        baseURL: `${gateway.gateway.url}/policies/timeouts.short/openai/v1`,
        maxRetries: 0,
      });
      const error = await within(rejectionOf(unreachable.chat.completions.create(chat)), 10_000, "the timeout");
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      const timeout = error as InstanceType<typeof OpenAI.InternalServerError>;
      expect(timeout.status).toBe(504);
      expect(timeout.error).toMatchObject({ code: "timeout", promptgate: { code: "timeout", retryable: true } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(Date.now() - started).toBeLessThan(5_000);
      const ref = timeout.headers?.get("x-promptgate-ref");
      const record = await fetch(`${gateway.gateway.url}/promptgate/admin/calls/${ref}`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(await record.json()).toMatchObject({
        error: "timeout",
        upstream_timeout: "connect",
        upstream_error: { class: "timeout", reason: "connect_timeout" },
      });
    } finally {
      await gateway.close();
      listener.close();
    }
  });
});
