import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { canonicalSegment, surfaceRoute } from "../../src/http/route-path.js";

/** The error `surfaceRoute` throws for a path, or undefined when it returns a route. */
function refusal(pathname: string, mount = "/gemini"): GatewayError | undefined {
  try {
    surfaceRoute(pathname, mount);
    return undefined;
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
}

const notFound = { code: "NOT_FOUND", status: 404 };
const badEncoding = { code: "INVALID_REQUEST", status: 400 };

/** Whether a decoded segment may stand in a route: not empty, not a dot segment, no separator. */
function isRouteSegment(segment: string): boolean {
  return segment !== "" && segment !== "." && segment !== ".." && !segment.includes("/") && !segment.includes("\\");
}

/** Checks that a canonical route path is safe to append to an upstream base URL, and returns its decoded segments. */
function expectSafeUpstreamPath(path: string): string[] {
  const pieces = path.split("/").slice(1);
  const decoded = pieces.map((piece) => decodeURIComponent(piece));
  for (const [index, segment] of decoded.entries()) {
    expect(isRouteSegment(segment)).toBe(true);
    expect(canonicalSegment(segment)).toBe(pieces[index]);
  }
  // The URL parser resolves nothing and re-encodes nothing: the upstream reads exactly these segments.
  expect(new URL(`https://upstream.test/base${path}`).pathname).toBe(`/base${path}`);
  return decoded;
}

describe("the route of a surface request", () => {
  it("keeps an ordinary route below the mount exactly as it is", () => {
    expect(surfaceRoute("/gemini/v1beta/models/gemini-2.5-flash:generateContent", "/gemini")).toEqual({
      policyRef: undefined,
      path: "/v1beta/models/gemini-2.5-flash:generateContent",
    });
    expect(surfaceRoute("/openai/v1/chat/completions", "/openai/v1").path).toBe("/chat/completions");
    expect(surfaceRoute("/anthropic/v1/messages/count_tokens", "/anthropic").path).toBe("/v1/messages/count_tokens");
  });

  it("reads the policy of a pinned mount through the same rules", () => {
    expect(surfaceRoute("/policies/investigation.bounded@3f2a9c1b0d4e/openai/v1/responses", "/openai/v1")).toEqual({
      policyRef: "investigation.bounded@3f2a9c1b0d4e",
      path: "/responses",
    });
    expect(surfaceRoute("/policies/a%40b/gemini/v1beta/models", "/gemini").policyRef).toBe("a@b");
    expect(refusal("/policies/x%5C..%5Cy/gemini/v1beta/models")).toMatchObject(notFound);
    expect(refusal("/policies/x/gemini/v1beta/models/x%5C..%5C..%5Cfiles")).toMatchObject(notFound);
  });

  it("gives the mount itself an empty route path", () => {
    expect(surfaceRoute("/gemini", "/gemini").path).toBe("");
  });

  it("matches a mount spelled with percent-escapes, as the router decodes it", () => {
    expect(surfaceRoute("/%67emini/v1beta/models", "/gemini").path).toBe("/v1beta/models");
  });

  it("refuses a path that does not lie below the mount", () => {
    expect(refusal("/openai/v2/models", "/openai/v1")).toMatchObject(notFound);
    expect(refusal("/openai", "/openai/v1")).toMatchObject(notFound);
    expect(refusal("gemini/v1beta", "/gemini")).toMatchObject(notFound);
  });

  it.each([
    ["an encoded backslash", "/gemini/v1beta/models/x%5C..%5C..%5Cfiles"],
    [
      "an encoded backslash before an operation",
      "/gemini/v1beta/cachedContents/x%5C..%5C..%5Cmodels%5Cg:generateContent",
    ],
    ["a lowercase encoded backslash", "/gemini/v1beta/models/x%5c..%5cfiles"],
    ["a literal backslash", "/gemini/v1beta/models/x\\..\\files"],
    ["an encoded slash", "/gemini/v1beta/models/x%2F..%2F..%2Ffiles"],
    ["an encoded dot-dot segment", "/gemini/v1beta/models/%2E%2E/files"],
    ["a half-encoded dot-dot segment", "/gemini/v1beta/models/.%2e/files"],
    ["a literal dot-dot segment", "/gemini/v1beta/models/../files"],
    ["an encoded dot segment", "/gemini/v1beta/%2E/models"],
    ["a literal dot segment", "/gemini/v1beta/./models"],
    ["an empty segment", "/gemini/v1beta//models"],
    ["a trailing slash", "/gemini/v1beta/models/"],
    ["an empty segment right below the mount", "/gemini//v1beta/models"],
  ])("answers a segment with %s with 404 NOT_FOUND", (_name, pathname) => {
    expect(refusal(pathname)).toMatchObject(notFound);
  });

  it("takes dots inside a segment as ordinary characters", () => {
    for (const segment of ["gemini-2.5-flash:generateContent", "...", ".x", "..x", "x..", "x.", "a..b"]) {
      expect(surfaceRoute(`/gemini/v1beta/models/${segment}`, "/gemini").path).toBe(`/v1beta/models/${segment}`);
    }
  });

  it("decodes once, so a double-encoded backslash stays a literal `%5C` in one segment", () => {
    const { path } = surfaceRoute("/gemini/v1beta/models/x%255C..%255C..%255Cfiles", "/gemini");
    expect(path).toBe("/v1beta/models/x%255C..%255C..%255Cfiles");
    expect(expectSafeUpstreamPath(path)).toEqual(["v1beta", "models", "x%5C..%5C..%5Cfiles"]);
  });

  it("re-encodes each segment canonically", () => {
    const route = (segment: string) => surfaceRoute(`/gemini/v1beta/models/${segment}`, "/gemini").path.slice(15);
    expect(route("my%20model")).toBe("my%20model");
    expect(route("a%3Ab%40c")).toBe("a:b@c");
    expect(route("%41%7e")).toBe("A~");
    expect(route("%c3%a9")).toBe("%C3%A9");
    expect(route("a[b]")).toBe("a%5Bb%5D");
    expect(route("a|b^c")).toBe("a%7Cb%5Ec");
    expect(route("100%25")).toBe("100%25");
    expect(route("%3F%23")).toBe("%3F%23");
  });

  it.each([
    ["a truncated escape", "/gemini/v1beta/models/%E0%A4%A:generateContent"],
    ["a percent without hex digits", "/gemini/v1beta/models/%zz"],
    ["a lone percent", "/gemini/v1beta/models/100%"],
    ["bytes that are not UTF-8", "/gemini/v1beta/models/%FF"],
    ["an encoded lone surrogate", "/gemini/v1beta/models/%ED%A0%80"],
    ["broken encoding in the policy", "/policies/%E0/gemini/v1beta/models"],
  ])("answers %s with 400 INVALID_REQUEST", (_name, pathname) => {
    expect(refusal(pathname)).toMatchObject(badEncoding);
  });

  it("answers a lone surrogate in a raw path, which no serialized URL carries, with 400 rather than a crash", () => {
    expect(refusal("/gemini/v1beta/models/\ud800")).toMatchObject(badEncoding);
  });
});

describe("the canonical encoding of a segment", () => {
  it("keeps every RFC 3986 pchar literal", () => {
    const pchar = "ABCXYZabcxyz0189-._~!$&'()*+,;=:@";
    expect(canonicalSegment(pchar)).toBe(pchar);
  });

  it("escapes separators, the percent sign and everything else outside pchar", () => {
    expect(canonicalSegment("a/b\\c")).toBe("a%2Fb%5Cc");
    expect(canonicalSegment("%")).toBe("%25");
    expect(canonicalSegment("a b?c#d")).toBe("a%20b%3Fc%23d");
    expect(canonicalSegment('"<>`{}')).toBe("%22%3C%3E%60%7B%7D");
    expect(canonicalSegment("é😀\u0000")).toBe("%C3%A9%F0%9F%98%80%00");
  });
});

/** One character a segment may hold: the troublemakers often, any code point sometimes. */
const segmentCharacter = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(".", "/", "\\", "%", ":", "@", "~", " ", "?", "#", "a", "Z", "5", "C", "e") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
const segment = fc.oneof(
  fc.constantFrom("", ".", "..", "%2e", "%2E%2E", "x\\..", "gemini-2.5-flash:generateContent"),
  fc.string({ unit: segmentCharacter, maxLength: 8 }),
);

/** The UTF-8 bytes of a text as percent-escapes, in either hex case. */
function escapeAll(text: string, lowercase: boolean): string {
  const escaped = [...new TextEncoder().encode(text)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  return lowercase ? escaped : escaped.toUpperCase();
}

/** Ways a client may spell a decoded segment in a URL. */
const spelling = fc.constantFrom<Array<(text: string) => string>>(
  (text) => encodeURIComponent(text),
  (text) => escapeAll(text, false),
  (text) => escapeAll(text, true),
  (text) => encodeURIComponent(text).replace(/%5C/g, "\\").replace(/%2E/gi, "."),
);

describe("properties of the route", () => {
  it("passes exactly the paths whose decoded segments are all route segments, and the upstream reads those segments back", () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), spelling, fc.boolean(), (segments, spell, pinned) => {
        const prefix = pinned ? "/policies/investigation.bounded" : "";
        const pathname = `${prefix}/openai/v1${segments.map((each) => `/${spell(each)}`).join("")}`;
        const valid = segments.every(isRouteSegment);
        if (!valid) {
          expect(refusal(pathname, "/openai/v1")).toMatchObject(notFound);
          return;
        }
        const route = surfaceRoute(pathname, "/openai/v1");
        expect(route.policyRef).toBe(pinned ? "investigation.bounded" : undefined);
        expect(expectSafeUpstreamPath(route.path)).toEqual(segments);
      }),
      { numRuns: 5_000 },
    );
  });

  it("never hands on a path that an upstream URL parser would resolve, whatever the client's URL", () => {
    const raw = fc.string({
      unit: fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom("/", "\\", ".", "%", "2", "5", "e", "E", "f", "F", "c", "C", "a", ":"),
        },
        { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
      ),
      maxLength: 24,
    });
    fc.assert(
      fc.property(raw, (text) => {
        // What the gateway sees: the client's path after the URL parser, as `new URL(request.url).pathname`.
        const pathname = new URL(`http://gateway.test/gemini/${text.replace(/[?#]/g, "")}`).pathname;
        const error = refusal(pathname);
        if (error !== undefined) {
          expect([notFound.code, badEncoding.code]).toContain(error.code);
          return;
        }
        expectSafeUpstreamPath(surfaceRoute(pathname, "/gemini").path);
      }),
      { numRuns: 5_000 },
    );
  });
});
