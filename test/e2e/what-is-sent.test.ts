import { request } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

/**
 * Contract section 3, "what is sent is what was measured": the upstream path comes only from the
 * route the gateway matched, whatever path a client writes (test/app/duplicate-keys.test.ts: the body).
 */

type SurfaceName = "openai" | "gemini" | "anthropic";

/** A response as a raw HTTP client sees it. */
interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Sends a request with its path exactly as written: no client-side URL parsing, so `..` and
 * escapes reach the gateway as a client could send them.
 */
function send(origin: string, method: string, path: string, body?: string): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  const headers: Record<string, string> = { "x-goog-api-key": "k", "x-api-key": "k", authorization: "Bearer k" };
  if (body !== undefined) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, method, path, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () =>
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** Asserts a gateway error in the surface's native shape, with the promptgate code. */
function expectNativeError(surface: SurfaceName, response: RawResponse, status: number, code: string) {
  expect(response.status, response.body.slice(0, 300)).toBe(status);
  expect(response.headers["content-type"]).toMatch(/^application\/json/);
  expect(response.headers["x-should-retry"]).toBe("false");
  const ref = response.headers["x-promptgate-ref"];
  expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  const error = body.error as Record<string, unknown>;
  expect(error.promptgate).toMatchObject({ code, ref, retryable: false });
  if (surface === "openai") {
    expect(error).toMatchObject({ message: expect.any(String), type: expect.any(String), code });
    expect(error).toHaveProperty("param");
  } else if (surface === "gemini") {
    expect(error).toMatchObject({ code: status, status: expect.stringMatching(/^[A-Z_]+$/) });
    expect(error.details).toContainEqual(expect.objectContaining({ reason: code }));
  } else {
    expect(body).toMatchObject({ type: "error", request_id: ref });
    expect(error).toMatchObject({ type: expect.any(String), message: expect.any(String), code });
  }
  return error;
}

const geminiCall = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
const bigPatch = JSON.stringify({ ttl: "60s", displayName: "x".repeat(50_000) });

/** Paths that, with Hono's decoded path, used to resolve past the matched route upstream. */
const traversals: Array<{ surface: SurfaceName; method: string; path: string; body?: string }> = [
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/x%5C..%5C..%5Cfiles" },
  { surface: "gemini", method: "POST", path: "/gemini/v1beta/models/x%5C..%5C..%5Cfiles", body: geminiCall },
  { surface: "gemini", method: "PATCH", path: "/gemini/v1beta/models/x%5C..%5C..%5Cfiles", body: bigPatch },
  { surface: "gemini", method: "POST", path: "/gemini/v1beta/models/x%5C..%5Cg:generateContent", body: geminiCall },
  { surface: "gemini", method: "PATCH", path: "/gemini/v1beta/models/x%5C..%5Cg:generateContent", body: bigPatch },
  {
    surface: "gemini",
    method: "PATCH",
    path: "/gemini/v1beta/cachedContents/x%5C..%5C..%5Cmodels%5Cg:generateContent",
    body: bigPatch,
  },
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/x%5c..%5c..%5cfiles" },
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/x%2F..%2F..%2Ffiles" },
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/x%5C%2E%2E%5C%2E%2E%5Cfiles" },
  // A whole `..` or `%2E%2E` segment is resolved by the gateway's own URL parser, as for any URL: this
  // one addresses `/gemini/files`, which is no route.
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/%2E%2E/%2E%2E/files" },
  { surface: "gemini", method: "GET", path: "/gemini/v1beta/models/x/../../files" },
  { surface: "gemini", method: "GET", path: "/gemini/v1beta//models" },
  {
    surface: "gemini",
    method: "POST",
    path: "/policies/investigation.bounded/gemini/v1beta/models/x%5C..%5Cg:generateContent",
    body: geminiCall,
  },
  { surface: "openai", method: "GET", path: "/openai/v1/responses/x%5C..%5C..%5Cmodels" },
  { surface: "openai", method: "GET", path: "/openai/v1/responses/x%2F..%2F..%2Fmodels" },
  { surface: "openai", method: "POST", path: "/openai/v1/x%5C..%5Cchat%5Ccompletions", body: "{}" },
  { surface: "openai", method: "GET", path: "/policies/default/openai/v1/responses/r%5C..%5C..%5Cmodels" },
  { surface: "anthropic", method: "POST", path: "/anthropic/v1/x%5C..%5Cmessages", body: "{}" },
  { surface: "anthropic", method: "POST", path: "/anthropic/v1/messages%2F..%2Fmessages", body: "{}" },
  { surface: "anthropic", method: "POST", path: "/anthropic/v1/messages%5C%2E%2E%5Ccount_tokens", body: "{}" },
];

describe("what the gateway sends upstream", () => {
  let harness: GatewayUnderTest;

  beforeAll(async () => {
    harness = await startGatewayUnderTest();
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.received.length = 0;
  });

  describe("a path that would leave the route the gateway matched", () => {
    it.each(traversals)("answers $method $path with a native 404 and sends nothing", async (traversal) => {
      const response = await send(harness.gateway.url, traversal.method, traversal.path, traversal.body);
      expectNativeError(traversal.surface, response, 404, "NOT_FOUND");
      expect(harness.upstream.received).toEqual([]);
    });

    it("sends an ordinary Gemini route upstream at exactly its path", async () => {
      const path = "/gemini/v1beta/models/gemini-2.5-flash:generateContent";
      const response = await send(harness.gateway.url, "POST", path, geminiCall);
      expect(response.status, response.body).toBe(200);
      expect(harness.upstream.received.map(({ method, url }) => `${method} ${url}`)).toEqual([`POST ${path}`]);
      expect(harness.upstream.received[0]?.body).toBe(geminiCall);
    });

    it("sends a pinned mount's route upstream at exactly its path", async () => {
      const response = await send(
        harness.gateway.url,
        "POST",
        "/policies/investigation.bounded/gemini/v1beta/models/gemini-2.5-flash:generateContent?alt=sse",
        geminiCall,
      );
      expect(response.status, response.body).toBe(200);
      expect(harness.upstream.received.map(({ url }) => url)).toEqual([
        "/gemini/v1beta/models/gemini-2.5-flash:generateContent?alt=sse",
      ]);
    });

    it("decodes once, so a double-encoded backslash reaches upstream only as a literal `%5C` inside one segment", async () => {
      const path = "/gemini/v1beta/models/x%255C..%255C..%255Cfiles";
      await send(harness.gateway.url, "GET", path);
      expect(harness.upstream.received.map(({ method, url }) => `${method} ${url}`)).toEqual([`GET ${path}`]);
    });

    it("forwards a model name that needs escapes in its canonical encoding", async () => {
      const response = await send(
        harness.gateway.url,
        "POST",
        "/gemini/v1beta/models/my%20model%3AgenerateContent",
        geminiCall,
      );
      expect(response.status, response.body).toBe(200);
      expect(harness.upstream.received.map(({ url }) => url)).toEqual([
        "/gemini/v1beta/models/my%20model:generateContent",
      ]);
    });

    it("answers broken percent-encoding in the path with a native 400 INVALID_REQUEST and sends nothing", async () => {
      const response = await send(harness.gateway.url, "GET", "/gemini/v1beta/models/%E0%A4%A");
      expectNativeError("gemini", response, 400, "INVALID_REQUEST");
      expect(harness.upstream.received).toEqual([]);
    });
  });
});
