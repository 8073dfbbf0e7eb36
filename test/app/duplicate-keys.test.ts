import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { type InProcessUpstream, inProcessUpstream } from "../support/in-process-upstream.js";
import { type ErrorSurface, expectNativeError } from "../support/native-errors.js";

/**
 * Contract section 3, "what is sent is what was measured": a body with a duplicate key is refused rather than
 * measured by its last occurrence and forwarded with both.
 */

const marker = "BIG-PROMPT-MARKER-51c2";
const big = `${marker} ${"lorem ipsum ".repeat(2_000)}`;

/** Bodies with a key twice, per surface: at the top level (the big value first) and nested. */
const duplicates: Array<{ surface: ErrorSurface; path: string; topLevel: string; nested: string; valid: string }> = [
  {
    surface: "openai",
    path: "/openai/v1/chat/completions",
    topLevel: `{"model":"m","messages":[{"role":"user","content":"${big}"}],"messages":[{"role":"user","content":"hi"}]}`,
    nested: `{"model":"m","messages":[{"role":"user","content":"${big}","content":"hi"}]}`,
    valid: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
  },
  {
    surface: "gemini",
    path: "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
    topLevel: `{"contents":[{"role":"user","parts":[{"text":"${big}"}]}],"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
    nested: `{"contents":[{"role":"user","parts":[{"text":"${big}","\\u0074ext":"hi"}]}]}`,
    valid: `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
  },
  {
    surface: "anthropic",
    path: "/anthropic/v1/messages",
    topLevel: `{"model":"m","max_tokens":8,"system":"${big}","messages":[{"role":"user","content":"hi"}],"system":"s"}`,
    nested: `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"${big}","text":"hi"}]}]}`,
    valid: `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
  },
];

let app: GatewayApp;
let upstream: InProcessUpstream;

beforeAll(async () => {
  upstream = inProcessUpstream();
  ({ app } = await appUnderTest(upstream.environment, memoryStore(), upstream.fetch));
});
beforeEach(() => {
  upstream.received.length = 0;
});

async function send(path: string, body: string): Promise<Response> {
  return app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "k", "x-api-key": "k", authorization: "Bearer k" },
    body,
  });
}

describe.each(duplicates)("a body with a duplicate key on the $surface surface", (surface) => {
  it.each(["topLevel", "nested"] as const)(
    "answers a %s duplicate with a native 400 INVALID_REQUEST, echoes no value and sends nothing",
    async (where) => {
      const response = await send(surface.path, surface[where]);
      const text = await expectNativeError(surface.surface, response, 400, "INVALID_REQUEST");
      const error = (JSON.parse(text) as { error: { message: string } }).error;
      expect(error.message).toMatch(/^The request body has a duplicate key "[a-z]+" /);
      expect(text).not.toContain(marker);
      expect(upstream.received).toEqual([]);
    },
  );

  it("sends the same body without the duplicate as it came", async () => {
    const response = await send(surface.path, surface.valid);
    expect(response.status, await response.text()).toBe(200);
    expect(upstream.received.map(({ body }) => body)).toEqual([surface.valid]);
  });
});
