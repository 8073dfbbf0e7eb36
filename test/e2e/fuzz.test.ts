import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { upstreamErrorMessages } from "../../src/errors/error-classes.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

/**
 * Property tests over every generate and count route of the three surfaces: whatever the body,
 * the gateway answers in bounded time with a 2xx or a native 4xx, never a 5xx, and a body it
 * rejects itself never reaches the provider.
 */

type SurfaceName = "openai" | "gemini" | "anthropic";

interface Route {
  surface: SurfaceName;
  path: string;
  /** A valid body for the route. */
  valid: Record<string, unknown>;
}

const routes: Route[] = [
  {
    surface: "openai",
    path: "/openai/v1/chat/completions",
    valid: { model: "gpt-test", messages: [{ role: "user", content: "hello" }] },
  },
  { surface: "openai", path: "/openai/v1/responses", valid: { model: "gpt-test", input: "hello" } },
  {
    surface: "gemini",
    path: "/gemini/v1beta/models/gemini-test:generateContent",
    valid: { contents: [{ role: "user", parts: [{ text: "hello" }] }] },
  },
  {
    surface: "gemini",
    path: "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    valid: { contents: [{ role: "user", parts: [{ text: "hello" }] }] },
  },
  {
    surface: "gemini",
    path: "/gemini/v1beta/models/gemini-test:countTokens",
    valid: { contents: [{ role: "user", parts: [{ text: "hello" }] }] },
  },
  {
    surface: "anthropic",
    path: "/anthropic/v1/messages",
    valid: { model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "hello" }] },
  },
  {
    surface: "anthropic",
    path: "/anthropic/v1/messages/count_tokens",
    valid: { model: "claude-test", messages: [{ role: "user", content: "hello" }] },
  },
];

/** The messages of answers derived from a provider's failed answer (not the gateway's own rejections). */
const providerMessages = new Set<string>(Object.values(upstreamErrorMessages));

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({ PROMPTGATE_MAX_BODY_BYTES: String(4 * 1024 * 1024) });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

/** The error member of a native error body, after checking the surface's shape; undefined if not native. */
function nativeError(surface: SurfaceName, status: number, body: unknown): { message: string; code: string } {
  expect(body).toBeTypeOf("object");
  const record = body as Record<string, unknown>;
  const error = record.error as Record<string, unknown>;
  expect(error).toBeTypeOf("object");
  expect(error.message).toEqual(expect.any(String));
  const promptgate = error.promptgate as Record<string, unknown>;
  expect(promptgate).toMatchObject({ code: expect.any(String), ref: expect.stringMatching(/^ref_[0-9a-f]{16}$/) });
  if (surface === "openai") {
    expect(error).toMatchObject({ type: expect.any(String), code: promptgate.code });
    expect(error).toHaveProperty("param");
  } else if (surface === "gemini") {
    expect(error).toMatchObject({ code: status, status: expect.stringMatching(/^[A-Z_]+$/) });
    expect(error.details).toContainEqual(expect.objectContaining({ reason: promptgate.code }));
  } else {
    expect(record.type).toBe("error");
    expect(record.request_id).toBe(promptgate.ref);
    expect(error).toMatchObject({ type: expect.any(String), code: promptgate.code });
  }
  return { message: error.message as string, code: promptgate.code as string };
}

/**
 * Sends one body and checks the properties: bounded time, no 5xx, a 2xx or a native 4xx, and no
 * provider call for a body the gateway rejected itself. Returns the status.
 */
async function check(route: Route, body: BodyInit | null, contentType: string | null = "application/json") {
  const before = harness.upstream.received.length;
  const headers: Record<string, string> = { "x-goog-api-key": "k", "x-api-key": "k", authorization: "Bearer k" };
  if (contentType !== null) headers["content-type"] = contentType;
  const response = await fetch(`${harness.gateway.url}${route.path}`, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  const grew = harness.upstream.received.length > before;
  expect(response.status, text.slice(0, 300)).toBeLessThan(500);
  expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
  if (response.status >= 200 && response.status < 300) return { status: response.status, grew };
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const error = nativeError(route.surface, response.status, JSON.parse(text));
  // A gateway code that is not relayed from the provider: nothing may have gone upstream.
  if (!providerMessages.has(error.message)) expect(grew, `${error.code} after an upstream call`).toBe(false);
  return { status: response.status, grew, code: error.code };
}

const route = fc.constantFrom(...routes);
const seed = 20_260_706;

/** A JSON-ish value of any shape, wrong types included. */
const wrongValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.constant([]),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 3 }),
);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path to a value inside `value`, the root excluded. */
function pathsOf(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [];
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, [...prefix, key])]);
}

type Mutation = { kind: "replace"; value: unknown } | { kind: "delete" } | { kind: "duplicate"; times: number };

/** `body` with `mutation` applied at `path`. */
function mutate(body: Record<string, unknown>, path: Array<string | number>, mutation: Mutation): unknown {
  const root = structuredClone(body) as Json;
  let parent = root as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (mutation.kind === "replace") parent[last] = mutation.value as Json;
  else if (mutation.kind === "delete") {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else {
    // The whole body duplicated into itself, `times` deep.
    let nested: Json = structuredClone(body) as Json;
    for (let level = 1; level < mutation.times; level++) nested = { ...(body as { [key: string]: Json }), x: nested };
    parent[last] = nested;
  }
  return root;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  wrongValue.map((value) => ({ kind: "replace" as const, value })),
  fc.constant({ kind: "delete" as const }),
  fc.integer({ min: 1, max: 40 }).map((times) => ({ kind: "duplicate" as const, times })),
);

const invalidUtf8Sequences: number[][] = [
  [0xff],
  [0xfe],
  [0x80],
  [0xbf, 0x80],
  [0xc0, 0xaf],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf0, 0x82, 0x82, 0xac],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xc3],
];

const encoder = new TextEncoder();

describe("fuzzing the surfaces' generate and count routes", () => {
  it("answers random JSON values with a native 4xx or a 2xx, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(route, fc.jsonValue({ maxDepth: 6 }), async (target, value) => {
        await check(target, JSON.stringify(value));
      }),
      { numRuns: 200, seed },
    );
  });

  it("answers mutated valid bodies (wrong types, deletions, deep duplicates) without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        route.chain((target) => {
          const paths = pathsOf(target.valid as Json);
          return fc.tuple(fc.constant(target), fc.constantFrom(...paths), mutation);
        }),
        async ([target, path, change]) => {
          await check(target, JSON.stringify(mutate(target.valid, path, change)));
        },
      ),
      { numRuns: 200, seed },
    );
  });

  it("answers duplicated keys in the JSON text without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(route, wrongValue, fc.boolean(), async (target, value, first) => {
        const [key] = Object.keys(target.valid);
        const duplicate = `${JSON.stringify(key)}: ${JSON.stringify(value) ?? "null"}`;
        const valid = JSON.stringify(target.valid);
        const text = first ? `{${duplicate}, ${valid.slice(1)}` : `${valid.slice(0, -1)}, ${duplicate}}`;
        await check(target, text);
      }),
      { numRuns: 100, seed },
    );
  });

  it("answers nesting deeper than 512 levels with a native 400 INVALID_REQUEST and no upstream call", async () => {
    await fc.assert(
      fc.asyncProperty(
        route,
        fc.integer({ min: 513, max: 20_000 }),
        fc.constantFrom("[]", "{}", "mixed"),
        fc.constantFrom("root", "field"),
        async (target, depth, kind, where) => {
          const open = (level: number) => (kind === "[]" || (kind === "mixed" && level % 2) ? "[" : '{"a":');
          const close = (level: number) => (kind === "[]" || (kind === "mixed" && level % 2) ? "]" : "}");
          let opening = "";
          let closing = "";
          for (let level = 0; level < depth; level++) {
            opening += open(level);
            closing = close(level) + closing;
          }
          const deep = `${opening}1${closing}`;
          const text =
            where === "root"
              ? `{"deep": ${deep}}`
              : JSON.stringify({ ...target.valid, extra: "DEEP" }).replace('"DEEP"', deep);
          const result = await check(target, text);
          expect(result.status).toBe(400);
          expect(result.code).toBe("INVALID_REQUEST");
          expect(result.grew).toBe(false);
        },
      ),
      { numRuns: 60, seed },
    );
  });

  it("answers huge strings in any field without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        route.chain((target) =>
          fc.tuple(
            fc.constant(target),
            fc.constantFrom(...pathsOf(target.valid as Json)),
            fc.integer({ min: 1, max: 3 }),
          ),
        ),
        fc.integer({ min: 100_000, max: 5_000_000 }),
        fc.constantFrom("a", "é", "😀", "\\u0000", '"'),
        async ([target, path], length, unit) => {
          const huge = unit.repeat(Math.ceil(length / unit.length / (unit === "😀" ? 4 : 1)));
          const text = JSON.stringify(mutate(target.valid, path, { kind: "replace", value: huge }));
          const result = await check(target, text);
          if (text.length > 4 * 1024 * 1024) expect(result.status).toBe(413);
        },
      ),
      { numRuns: 15, seed },
    );
  });

  it("answers invalid UTF-8 anywhere in the body with a native 400 and no upstream call", async () => {
    await fc.assert(
      fc.asyncProperty(
        route,
        fc.constantFrom(...invalidUtf8Sequences),
        fc.nat(),
        async (target, sequence, position) => {
          const valid = encoder.encode(JSON.stringify(target.valid));
          // Inside a string value ("hello") or anywhere in the text.
          const text = new TextDecoder().decode(valid);
          const inString = text.indexOf("hello") + 2;
          const at = position % 2 === 0 ? inString : position % valid.length;
          const bytes = new Uint8Array([...valid.slice(0, at), ...sequence, ...valid.slice(at)]);
          const result = await check(target, bytes);
          expect(result.status).toBe(400);
          expect(result.grew).toBe(false);
        },
      ),
      { numRuns: 200, seed },
    );
  });

  it("answers lone surrogates in JSON escapes without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        route.chain((target) =>
          fc.tuple(fc.constant(target), fc.constantFrom(...pathsOf(target.valid as Json).map((path) => path))),
        ),
        fc.array(fc.constantFrom("\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\udc00\\ud800", "x", "😀"), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.boolean(),
        async ([target, path], pieces, asKey) => {
          const escaped = pieces.join("");
          const text = asKey
            ? JSON.stringify({ ...target.valid, SURROGATE: 1 }).replace('"SURROGATE"', `"${escaped}"`)
            : JSON.stringify(mutate(target.valid, path, { kind: "replace", value: "SURROGATE" })).replace(
                '"SURROGATE"',
                `"${escaped}"`,
              );
          await check(target, text);
        },
      ),
      { numRuns: 150, seed },
    );
  });

  it("answers wrong content types without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        route,
        fc.constantFrom(
          null,
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/xml",
          "application/json; charset=latin1",
          "application/json; charset=utf-16",
          "application/octet-stream",
          "",
          "garbage;;;=",
        ),
        fc.constantFrom("valid", "form", "empty"),
        async (target, contentType, kind) => {
          const body = kind === "valid" ? JSON.stringify(target.valid) : kind === "form" ? "a=1&b=2" : "";
          await check(target, body, contentType);
        },
      ),
      { numRuns: 100, seed },
    );
  });

  it.each(routes)("answers an empty body on $path with a native 400 and no upstream call", async (target) => {
    for (const contentType of ["application/json", null]) {
      for (const body of ["", null, " ", "\n\t "]) {
        const result = await check(target, body, contentType);
        expect(result.status).toBe(400);
        expect(result.code).toBe("INVALID_REQUEST");
        expect(result.grew).toBe(false);
      }
    }
  });

  it("still serves valid calls on every route afterwards", async () => {
    for (const target of routes) {
      const result = await check(target, JSON.stringify(target.valid));
      expect(result.status).toBe(200);
    }
  });
});
