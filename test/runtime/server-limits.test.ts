import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { defaultMaxConnections, openFileLimit } from "../../src/runtime/node/server-limits.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { upstreamEnvironment } from "../support/gateway-process.js";

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const closable of running.splice(0).reverse()) await closable.close();
});

async function gatewayWith(environment: Record<string, string>, warnings: string[] = []): Promise<NodeGateway> {
  const gateway = await startNodeGateway(
    { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", ...environment },
    { logDestination: { write: () => undefined }, warn: (line) => void warnings.push(line) },
  );
  running.push(gateway);
  return gateway;
}

async function fakeUpstream(): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream();
  running.push(upstream);
  return upstream;
}

/** A raw connection that sends `text`; resolves what came back and after how long the gateway closed it. */
function rawConnection(url: string, text: string): Promise<{ received: string; closedAfterMs: number }> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    let received = "";
    const opened = Date.now();
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(text));
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve({ received, closedAfterMs: Date.now() - opened }));
  });
}

describe("the Node server", () => {
  it("closes a connection that never finishes its headers with 408 after PROMPTGATE_HEADERS_TIMEOUT_SECONDS", async () => {
    const gateway = await gatewayWith({ PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "1" });
    const { received, closedAfterMs } = await rawConnection(gateway.url, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n");
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it("closes a connection that sends nothing at all after the header timeout", async () => {
    const gateway = await gatewayWith({ PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "1" });
    const { closedAfterMs } = await rawConnection(gateway.url, "");
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it("closes a request whose body is still arriving after PROMPTGATE_REQUEST_TIMEOUT_SECONDS with 408", async () => {
    const gateway = await gatewayWith({
      PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "1",
      PROMPTGATE_REQUEST_TIMEOUT_SECONDS: "2",
    });
    const head = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Length: 100\r\n\r\n";
    const { received, closedAfterMs } = await rawConnection(gateway.url, `${head}{"model":`);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(1_900);
    expect(closedAfterMs).toBeLessThan(6_000);
  });

  it("does not cut a streamed answer that outlasts the request timeout", async () => {
    const upstream = await fakeUpstream();
    upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      let part = 0;
      const timer = setInterval(() => {
        part += 1;
        const chunk = {
          id: "chatcmpl-long",
          object: "chat.completion.chunk",
          created: 1,
          model: "gpt-test",
          choices: [{ index: 0, delta: { content: `part ${part} ` }, finish_reason: null }],
        };
        response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        if (part === 6) {
          clearInterval(timer);
          response.end("data: [DONE]\n\n");
        }
      }, 400);
      response.once("close", () => clearInterval(timer));
    });
    const gateway = await gatewayWith({
      ...upstreamEnvironment(upstream),
      PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "1",
      PROMPTGATE_REQUEST_TIMEOUT_SECONDS: "1",
    });
    const started = Date.now();
    const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
      body: JSON.stringify({ model: "gpt-test", stream: true, messages: [{ role: "user", content: "hello" }] }),
    });
    const text = await response.text();
    expect(Date.now() - started).toBeGreaterThan(2_000);
    expect(text).toContain("part 6");
    expect(text).toContain("[DONE]");
  });

  it("closes an idle kept-alive connection after PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS, and says so", async () => {
    const gateway = await gatewayWith({ PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS: "1" });
    const { received, closedAfterMs } = await rawConnection(
      gateway.url,
      "GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n",
    );
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toMatch(/^keep-alive: timeout=1\r$/im);
    expect(closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it("turns connections past PROMPTGATE_MAX_CONNECTIONS away at once, warns, and takes them again once one closes", async () => {
    const warnings: string[] = [];
    const gateway = await gatewayWith({ PROMPTGATE_MAX_CONNECTIONS: "2" }, warnings);
    const { port } = new URL(gateway.url);
    const held = await Promise.all(
      [1, 2].map(
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const socket = connect(Number(port), "127.0.0.1", () => resolve(socket));
          }),
      ),
    );
    // Both are accepted once the gateway answers on one of them.
    held[0]?.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n");
    await new Promise((resolve) => held[0]?.once("data", resolve));
    const refused = await rawConnection(gateway.url, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n");
    expect(refused.received).toBe("");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("cap of 2 open connections (PROMPTGATE_MAX_CONNECTIONS)");
    held[1]?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await fetch(`${gateway.url}/healthz`, { headers: { connection: "close" } })).status).toBe(200);
    held[0]?.destroy();
  });
});

describe("the default connection cap", () => {
  it("is half of the open files left after 64 for the process, as a call may hold an upstream connection too", () => {
    expect(defaultMaxConnections(1_024)).toBe(480);
    expect(defaultMaxConnections(65_536)).toBe(32_736);
  });

  it("is 4,096 where the open-file limit cannot be read, and never below 16", () => {
    expect(defaultMaxConnections(undefined)).toBe(4_096);
    expect(defaultMaxConnections(80)).toBe(16);
  });

  it("reads the soft open-file limit from Linux's /proc/self/limits, and none from text without it", () => {
    const limits = [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max processes             127431               127431               processes ",
      "Max open files            20000                524288               files     ",
    ].join("\n");
    expect(openFileLimit(limits)).toBe(20_000);
    expect(openFileLimit(limits.replace("20000 ", "unlimited"))).toBeUndefined();
    expect(openFileLimit("")).toBeUndefined();
  });
});
