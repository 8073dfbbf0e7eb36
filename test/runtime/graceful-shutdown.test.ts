import Database from "better-sqlite3";
import { Client } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { upstreamEnvironment } from "../support/gateway-process.js";
import { tempDatabase } from "../support/temp-state.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(): Promise<{ gateway: NodeGateway; upstream: FakeUpstream; database: string }> {
  const upstream = await startFakeUpstream();
  cleanups.push(() => upstream.close());
  const database = tempDatabase();
  const gateway = await startNodeGateway(
    { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: database, ...upstreamEnvironment(upstream) },
    { logDestination: { write: () => undefined } },
  );
  cleanups.push(() => gateway.close());
  return { gateway, upstream, database };
}

const chat = (stream: boolean) => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
  body: JSON.stringify({ model: "gpt-test", stream, messages: [{ role: "user", content: "hello" }] }),
});

function storedRecords(database: string): Array<Record<string, unknown>> {
  const reader = new Database(database, { readonly: true });
  const rows = reader.prepare("SELECT record FROM calls ORDER BY seq").all() as Array<{ record: string }>;
  reader.close();
  return rows.map((row) => JSON.parse(row.record));
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("a gateway shutting down", () => {
  it("is ready until it drains, then answers /readyz 503 with `connection: close` on a connection open before", async () => {
    const { gateway, upstream } = await setUp();
    upstream.answerWith(() => undefined);
    const kept = new Client(gateway.url);
    cleanups.push(() => kept.destroy());
    expect((await kept.request({ method: "GET", path: "/readyz" })).statusCode).toBe(200);
    void fetch(`${gateway.url}/openai/v1/chat/completions`, chat(false)).catch(() => undefined);
    await until(() => upstream.received.length === 1);

    void gateway.shutdown(10_000);
    const readiness = await kept.request({ method: "GET", path: "/readyz" });
    expect(readiness.statusCode).toBe(503);
    expect(readiness.headers.connection).toBe("close");
    expect(await readiness.body.json()).toEqual({ status: "draining" });
  });

  it("commits a streamed call's record before it closes the store", async () => {
    const { gateway, upstream, database } = await setUp();
    let finish = () => {};
    upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (content: string) => ({
        id: "chatcmpl-stream",
        object: "chat.completion.chunk",
        created: 1,
        model: "gpt-test",
        choices: [{ index: 0, delta: { content }, finish_reason: null }],
      });
      response.write(`data: ${JSON.stringify(chunk("first "))}\n\n`);
      finish = () => {
        response.write(`data: ${JSON.stringify(chunk("last"))}\n\n`);
        response.end("data: [DONE]\n\n");
      };
    });
    const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, chat(true));
    const ref = response.headers.get("x-promptgate-ref");
    const stopped = gateway.shutdown(10_000);
    setTimeout(() => finish(), 300);
    expect(await response.text()).toContain("[DONE]");
    expect(await stopped).toMatchObject({ requests: 1, cutOff: 0 });
    expect(storedRecords(database)).toMatchObject([{ ref, decision: "sent", upstream_status: 200 }]);
  });

  it("cuts the drain short when asked again with less time, and records the call it cut off", async () => {
    const { gateway, upstream, database } = await setUp();
    upstream.answerWith(() => undefined);
    const call = fetch(`${gateway.url}/openai/v1/chat/completions`, chat(false)).catch(() => "cut off");
    await until(() => upstream.received.length === 1);

    const draining = gateway.shutdown(60_000);
    const started = Date.now();
    expect(gateway.shutdown(0)).toBe(draining);
    expect(await draining).toMatchObject({ requests: 1, cutOff: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await call).toBe("cut off");
    expect(storedRecords(database)).toMatchObject([{ decision: "cancelled" }]);
  });
});
