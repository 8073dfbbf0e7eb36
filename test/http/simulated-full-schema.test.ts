import { describe, expect, it } from "vitest";
import schema from "../../schemas/investigation_bootstrap_v22.json" with { type: "json" };
import { appUnderTest } from "../support/app-under-test.js";

// Gemini receives a projection of the client's response schema (patterns, bounds and unions it cannot take are
// left out and checked locally). The simulated provider stands in for a model that follows the whole schema: its
// answer through Gemini satisfies the full schema, as through OpenAI. A real provider is never told more than the
// projection. Through app.request(), on Node and in workerd.

const path = "/policies/investigation.bounded/gemini/v1beta/models/gemini-2.5-flash:generateContent";
const body = JSON.stringify({
  contents: [{ role: "user", parts: [{ text: "Assess the hypothesis and choose the next step." }] }],
  generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema },
});

describe("a structured answer of the simulated Gemini", () => {
  it("satisfies the full schema the client sent, not only the projection Gemini receives", async () => {
    const { app, records } = await appUnderTest();
    const response = await app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "simulated" },
      body,
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    expect(JSON.parse(answer.candidates[0]!.content.parts[0]!.text)).toHaveProperty("next");
    expect(records.at(-1)?.validation).toMatchObject({ valid: true });
    expect(records.at(-1)?.projection_omitted?.length).toBeGreaterThan(0);
  });

  it("is told the schema by a header no real provider receives", async () => {
    const seen: Headers[] = [];
    const { app } = await appUnderTest(
      { PROMPTGATE_UPSTREAM_GEMINI: "https://gemini.example", GEMINI_API_KEY: "server-key", PROMPTGATE_KEYS: "gk" },
      undefined,
      async (request) => {
        seen.push(new Headers(request.headers));
        return Response.json({ candidates: [{ content: { role: "model", parts: [{ text: "{}" }] } }] });
      },
    );
    await app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "gk" },
      body,
    });
    expect(seen).toHaveLength(1);
    expect([...seen[0]!.keys()].filter((name) => name.startsWith("x-promptgate"))).toEqual([]);
  });
});
