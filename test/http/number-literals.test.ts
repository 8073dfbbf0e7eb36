import { describe, expect, it } from "vitest";
import { maxNumberLiteral } from "../../src/json/tape-scan.js";
import { appUnderTest } from "../support/app-under-test.js";

// A number literal longer than any JSON writer makes is refused with 400 in the client's shape, on every surface,
// before anything is sent; one at the limit is measured as before. (test/http runs on Node and in workerd.)

const digits = (count: number) => `1${"0".repeat(count - 1)}`;

/** A call of each surface whose `seed`-like sampling member (not model-visible) holds `literal`. */
const calls = (literal: string) => [
  {
    path: "/openai/v1/chat/completions",
    body: `{"model":"gpt-4.1-mini","seed":${literal},"messages":[{"role":"user","content":"hi"}]}`,
  },
  {
    path: "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
    body: `{"generationConfig":{"seed":${literal}},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
  },
  {
    path: "/anthropic/v1/messages",
    body: `{"model":"claude-sonnet-4-5","max_tokens":${literal},"messages":[{"role":"user","content":"hi"}]}`,
  },
];

describe("number literals", () => {
  for (const length of [maxNumberLiteral + 1, 200_000]) {
    it(`refuses one of ${length} digits with 400 INVALID_REQUEST on every surface, sending nothing`, async () => {
      const { app, records } = await appUnderTest();
      for (const call of calls(digits(length))) {
        const response = await app.request(call.path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: call.body,
        });
        expect(response.status, call.path).toBe(400);
        const { error } = (await response.json()) as { error: { message: string } };
        expect(error.message).toContain(`number literal longer than ${maxNumberLiteral}`);
        expect(JSON.stringify(error)).toContain("INVALID_REQUEST");
      }
      expect(records.map((record) => [record.decision, record.upstream_status])).toEqual(
        calls("0").map(() => ["failed", undefined]),
      );
    });
  }

  it("measures one at the limit as before", async () => {
    const { app } = await appUnderTest();
    const [call] = calls(`0.${"0".repeat(maxNumberLiteral - 3)}1`);
    const response = await app.request(call!.path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: call!.body,
    });
    expect(response.status).toBe(200);
  });
});
