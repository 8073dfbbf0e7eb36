import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";

// A native stream that closes before its protocol's last event ends with the surface's native error event and is
// recorded as broken off, on Node and in workerd (test/http runs in both; test/e2e/streams-closed-early.test.ts
// shows the same through each provider's SDK).

const sse = (events: unknown[]) =>
  new Response(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });

const cases = [
  {
    name: "OpenAI chat",
    path: "/openai/v1/chat/completions",
    body: { model: "gpt-test", stream: true, messages: [{ role: "user", content: "hi" }] },
    events: [{ choices: [{ index: 0, delta: { content: "cut" } }] }],
  },
  {
    name: "Anthropic",
    path: "/anthropic/v1/messages",
    body: { model: "claude-test", max_tokens: 8, stream: true, messages: [{ role: "user", content: "hi" }] },
    events: [{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "cut" } }],
  },
  {
    name: "Gemini",
    path: "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    events: [{ candidates: [{ content: { role: "model", parts: [{ text: "cut" }] }, index: 0 }] }],
  },
];

describe("a native stream that closes before its last event", () => {
  for (const { name, path, body, events } of cases) {
    it(`${name}: ends with the native error event and is recorded as broken off`, async () => {
      const { app, records } = await appUnderTest(
        { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", GEMINI_API_KEY: "k" },
        undefined,
        async () => sse(events),
      );
      const response = await app.request(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain("cut");
      expect(text.slice(text.lastIndexOf("data:"))).toMatch(/"error"/);
      expect(records.at(-1)).toMatchObject({ error: "upstream", upstream_error: { reason: "STREAM_CLOSED_EARLY" } });
    });
  }
});

describe("a streamed call routed to another provider, answered with a whole JSON body", () => {
  it("ends the OpenAI client's stream with the native error event, recorded as no event stream", async () => {
    const { app, records } = await appUnderTest({ ANTHROPIC_API_KEY: "k" }, undefined, async () =>
      Response.json({ id: "msg", type: "message", role: "assistant", content: [{ type: "text", text: "whole" }] }),
    );
    const response = await app.request("/openai/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toMatch(
      /^data: \{"error":\{"message":"The provider failed or could not be reached\."/,
    );
    expect(records.at(-1)).toMatchObject({ error: "upstream", upstream_error: { reason: "NOT_AN_EVENT_STREAM" } });
  });
});
