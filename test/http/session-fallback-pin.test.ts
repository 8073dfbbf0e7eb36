import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";

// A session runs on the model that answered its first turn: after a fallback, the fallback's (on Node and in
// workerd; test/e2e/routing-openai-sdk.test.ts shows the same through the openai SDK).

describe("a session whose first turn fell back", () => {
  it("continues on the model that answered, and refuses the model that failed", async () => {
    const sent: string[] = [];
    const { app } = await appUnderTest({ GEMINI_API_KEY: "g", ANTHROPIC_API_KEY: "a" }, undefined, async (request) => {
      const path = new URL(request.url).pathname;
      sent.push(path.includes(":generateContent") ? "gemini" : "anthropic");
      if (path.includes(":generateContent")) {
        return Response.json({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } }, { status: 429 });
      }
      return Response.json({
        id: `msg_${sent.length}`,
        type: "message",
        role: "assistant",
        model: "claude-haiku-4-5",
        content: [{ type: "text", text: "From the fallback." }],
        stop_reason: "end_turn",
        usage: { input_tokens: 5, output_tokens: 4 },
      });
    });
    const call = (body: object) =>
      app.request("/openai/v1/responses", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
        body: JSON.stringify(body),
      });
    const first = await call({ model: "fast", input: "Hello" });
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    expect(sent).toEqual(["gemini", "anthropic"]);

    const next = await call({ input: "And then?", previous_response_id: id });
    expect(next.status).toBe(200);
    expect(sent.slice(2)).toEqual(["anthropic"]);

    const back = await call({ model: "fast", input: "Back?", previous_response_id: id });
    expect(back.status).toBe(400);
    expect(JSON.stringify(await back.json())).toContain("SESSION_SETTINGS_CHANGED");
    expect(sent).toHaveLength(3);
  });
});
