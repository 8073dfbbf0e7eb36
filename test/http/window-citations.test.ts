import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";

// Issue 52, item 9: a citation whose source id is no string naming a known source (a number, an object, null, none)
// is taken out of the answer like an unknown id, not left unchecked. Through app.request(), on Node and in workerd.

const citations = [
  { source_id: "D1" },
  { source_id: 1 },
  { source_id: { id: "D1" } },
  { source_id: null },
  { quote: "no id" },
  7,
  null,
  { source_id: ["D1"] },
  { source_id: "D9" },
  { source_id: "D1" },
];

describe("citations without a string source id", () => {
  it("are removed, counted and recorded with source_id null, leaving only known ids", async () => {
    const { app, records } = await appUnderTest({}, undefined, async () =>
      Response.json({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-test",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            message: { role: "assistant", content: JSON.stringify({ answer: "x", citations }) },
          },
        ],
      }),
    );
    const headers = { "content-type": "application/json", authorization: "Bearer sk-alice" };
    const registered = await app.request("/promptgate/window/sources/case-9", {
      method: "PUT",
      headers,
      body: JSON.stringify({ sources: ["D1", "D2"] }),
    });
    expect(registered.status).toBe(200);
    const response = await app.request("/openai/v1/chat/completions", {
      method: "POST",
      headers: { ...headers, "x-promptgate-sources": "case-9" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "cite" }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(JSON.parse(body.choices[0]?.message.content ?? "null")).toEqual({
      answer: "x",
      citations: [{ source_id: "D1" }],
    });
    expect(response.headers.get("x-promptgate-citations-removed")).toBe("9");
    const record = records.find((entry) => entry.ref === response.headers.get("x-promptgate-ref"));
    expect(record?.citations_removed).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7].map((at) => ({ path: `/citations/${at}`, source_id: null, reason: "unknown" })),
      { path: "/citations/8", source_id: "D9", reason: "unknown" },
      { path: "/citations/9", source_id: "D1", reason: "duplicate" },
    ]);
  });
});
