import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { expectNativeError } from "../support/native-errors.js";

/** How one surface is addressed and what its native error looks like. */
interface SurfaceCase {
  name: "openai" | "gemini" | "anthropic";
  /** A generate route below the gateway's root. */
  route: string;
  /** A valid call with one user text. */
  call(text: string): Record<string, unknown>;
}

const marker = "PROMPT-MARKER-7f3a9c";

const openai: SurfaceCase = {
  name: "openai",
  route: "/openai/v1/chat/completions",
  call: (text) => ({ model: "m", messages: [{ role: "user", content: text }] }),
};

const gemini: SurfaceCase = {
  name: "gemini",
  route: "/gemini/v1beta/models/m:generateContent",
  call: (text) => ({ contents: [{ role: "user", parts: [{ text }] }] }),
};

const anthropic: SurfaceCase = {
  name: "anthropic",
  route: "/anthropic/v1/messages",
  call: (text) => ({ model: "m", max_tokens: 8, messages: [{ role: "user", content: text }] }),
};

const surfaces = [openai, gemini, anthropic];

function post(origin: string, path: string, body: BodyInit | null, headers: Record<string, string> = {}) {
  return fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** A free port on the loopback interface with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A body that would send `total` bytes in `size`-byte chunks, counting how many chunks were pulled. */
function countingStream(total: number, size: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const chunk = new Uint8Array(size).fill(0x20);
  const chunks = Math.ceil(total / size);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) {
        controller.close();
        return;
      }
      pulled++;
      controller.enqueue(chunk);
    },
  });
  return { body, pulled: () => pulled };
}

describe("bodies over the gateway's cap", () => {
  let harness: GatewayUnderTest;

  beforeAll(async () => {
    harness = await startGatewayUnderTest({ PROMPTGATE_MAX_BODY_BYTES: "1000" });
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.received.length = 0;
  });

  describe.each(surfaces)("the $name surface", (surface) => {
    it("answers a declared content-length over the cap with a native 413 PAYLOAD_TOO_LARGE", async () => {
      const body = JSON.stringify(surface.call("x".repeat(2_000)));
      const response = await post(harness.gateway.url, surface.route, body);
      await expectNativeError(surface.name, response, 413, "PAYLOAD_TOO_LARGE");
      expect(harness.upstream.received).toHaveLength(0);
    });

    it("answers a chunked body that keeps coming with a 413 without reading it whole", async () => {
      const chunkSize = 64 * 1024;
      const total = 100 * 1024 * 1024;
      const stream = countingStream(total, chunkSize);
      const response = await fetch(`${harness.gateway.url}${surface.route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stream.body,
        duplex: "half",
      } as RequestInit);
      await expectNativeError(surface.name, response, 413, "PAYLOAD_TOO_LARGE");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stream.pulled()).toBeLessThan(total / chunkSize / 4);
      expect(harness.upstream.received).toHaveLength(0);
    });
  });

  it("reads a chunked body of exactly the cap and forwards it unchanged", async () => {
    const json = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    const body = json.padEnd(1_000, " ");
    const bytes = new TextEncoder().encode(body);
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) {
          controller.close();
          return;
        }
        controller.enqueue(bytes.slice(offset, offset + 100));
        offset += 100;
      },
    });
    const response = await fetch(`${harness.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(200);
    expect(harness.upstream.received[0]?.body).toBe(body);
  });

  it("keeps serving after refusing oversize bodies", async () => {
    const response = await fetch(`${harness.gateway.url}/healthz`);
    expect(response.status).toBe(200);
  });
});

describe("an unreachable upstream", () => {
  let harness: GatewayUnderTest;

  beforeAll(async () => {
    harness = await startGatewayUnderTest({ PROMPTGATE_UPSTREAM_OPENAI: `http://127.0.0.1:${await closedPort()}/v1` });
  });
  afterAll(() => harness.close());

  const chat = JSON.stringify({ model: "m", messages: [{ role: "user", content: marker }] });

  it("answers with a native 502 `upstream` error that is retryable", async () => {
    const response = await post(harness.gateway.url, openai.route, chat, { authorization: "Bearer sk-client-secret" });
    const text = await expectNativeError(openai.name, response, 502, "upstream", true);
    expect(text).not.toContain(marker);
    expect(text).not.toContain("sk-client-secret");
    expect(text).not.toContain("127.0.0.1");
  });

  it("keeps serving other requests and surfaces after the failure", async () => {
    const again = await post(harness.gateway.url, openai.route, chat);
    await expectNativeError(openai.name, again, 502, "upstream", true);
    expect((await fetch(`${harness.gateway.url}/healthz`)).status).toBe(200);
    const other = await post(
      harness.gateway.url,
      anthropic.route,
      JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(other.status).toBe(200);
  });
});
