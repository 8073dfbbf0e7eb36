import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());

function withTimeout<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds)),
  ]);
}

describe("streaming through the gateway", () => {
  it("passes each upstream chunk to the client before the upstream stream has ended", async () => {
    let releaseRest: () => void = () => undefined;
    const restReleased = new Promise<void>((resolve) => {
      releaseRest = resolve;
    });
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"first"}}]}\n\n');
      void restReleased.then(() => {
        response.write('data: {"choices":[{"index":0,"delta":{"content":"second"}}]}\n\n');
        response.end("data: [DONE]\n\n");
      });
    });
    try {
      const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-promptgate-prompt-size")).not.toBeNull();
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      const first = await withTimeout(reader.read(), 5_000, "the first chunk");
      expect(decoder.decode(first.value)).toContain("first");
      releaseRest();
      let rest = "";
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        rest += decoder.decode(chunk.value);
      expect(rest).toContain("second");
      expect(rest).toContain("[DONE]");
    } finally {
      releaseRest();
      harness.upstream.answerWith(undefined);
    }
  });
});
