import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { type InProcessUpstream, inProcessUpstream } from "../support/in-process-upstream.js";
import { expectNativeError, refPattern } from "../support/native-errors.js";

/** How one surface is addressed and what its native error looks like. */
interface SurfaceCase {
  name: "openai" | "gemini" | "anthropic";
  /** A generate route below the gateway's root. */
  route: string;
  /** A route the surface does not serve, with the method to call it with. */
  unknownRoute: { method: string; path: string };
  /** Bodies that parse as JSON objects but carry a field of the wrong type; each holds the marker. */
  wrongTypes: Record<string, unknown>;
  /** A valid call with one user text, and tool declarations when given. */
  call(text: string, tools?: unknown[]): Record<string, unknown>;
}

const marker = "PROMPT-MARKER-7f3a9c";

const openai: SurfaceCase = {
  name: "openai",
  route: "/openai/v1/chat/completions",
  unknownRoute: { method: "POST", path: "/openai/v1/embeddingz" },
  wrongTypes: {
    "messages is not an array": { model: "m", messages: { role: "user", content: marker } },
    "a message's content is a number": {
      model: "m",
      messages: [
        { role: "user", content: 7 },
        { role: "user", content: marker },
      ],
    },
    "a message's role is missing": { model: "m", messages: [{ content: marker }] },
    "stream is a string": { model: "m", stream: "yes", messages: [{ role: "user", content: marker }] },
  },
  call: (text, tools) => ({ model: "m", messages: [{ role: "user", content: text }], ...(tools ? { tools } : {}) }),
};

const gemini: SurfaceCase = {
  name: "gemini",
  route: "/gemini/v1beta/models/m:generateContent",
  unknownRoute: { method: "POST", path: "/gemini/v1beta/models/m:frobnicate" },
  wrongTypes: {
    "contents is not an array": { contents: { role: "user", parts: [{ text: marker }] } },
    "a content's parts is a string": { contents: [{ role: "user", parts: marker }] },
    "a part's text is a number": { contents: [{ role: "user", parts: [{ text: 7 }, { text: marker }] }] },
    "systemInstruction and system_instruction conflict": {
      contents: [{ role: "user", parts: [{ text: marker }] }],
      systemInstruction: { parts: [{ text: marker }] },
      system_instruction: { parts: [{ text: marker }] },
    },
  },
  call: (text, tools) => ({ contents: [{ role: "user", parts: [{ text }] }], ...(tools ? { tools } : {}) }),
};

const anthropic: SurfaceCase = {
  name: "anthropic",
  route: "/anthropic/v1/messages",
  unknownRoute: { method: "POST", path: "/anthropic/v1/nope" },
  wrongTypes: {
    "messages is not an array": { model: "m", max_tokens: 8, messages: { role: "user", content: marker } },
    "a message's content is a number": {
      model: "m",
      max_tokens: 8,
      messages: [
        { role: "user", content: 7 },
        { role: "user", content: marker },
      ],
    },
    "a text block's text is a number": {
      model: "m",
      max_tokens: 8,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: 7 },
            { type: "text", text: marker },
          ],
        },
      ],
    },
    "system is a number": { model: "m", max_tokens: 8, system: 7, messages: [{ role: "user", content: marker }] },
  },
  call: (text, tools) => ({
    model: "m",
    max_tokens: 8,
    messages: [{ role: "user", content: text }],
    ...(tools ? { tools } : {}),
  }),
};

const surfaces = [openai, gemini, anthropic];

let app: GatewayApp;
let upstream: InProcessUpstream;

function post(path: string, body: BodyInit | null, headers: Record<string, string> = {}) {
  return app.request(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

/** Every header value of a response, for checking that none carries request content. */
function headerText(response: Response): string {
  return [...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
}

describe("bad input on the three surfaces", () => {
  beforeAll(async () => {
    upstream = inProcessUpstream();
    ({ app } = await appUnderTest(upstream.environment, memoryStore(), upstream.fetch));
  });
  beforeEach(() => {
    upstream.received.length = 0;
  });

  describe.each(surfaces)("the $name surface", (surface) => {
    const badBodies: Record<string, BodyInit> = {
      "unparseable JSON": `{"messages": [{"role": "user", "content": "${marker}"`,
      "an empty body": "",
      "a top-level array": JSON.stringify([{ role: "user", content: marker }]),
      "a top-level string": JSON.stringify(marker),
      "invalid UTF-8 bytes": new Uint8Array([
        ...new TextEncoder().encode(`{"text": "${marker}`),
        0xff,
        0xfe,
        0x22,
        0x7d,
      ]),
      "an overlong UTF-8 encoding": new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
      "a truncated UTF-8 sequence": new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]),
    };

    it.each(Object.keys(badBodies))("answers %s with a native 400 INVALID_REQUEST and sends nothing", async (name) => {
      const response = await post(surface.route, badBodies[name]!);
      await expectNativeError(surface.name, response, 400, "INVALID_REQUEST");
      expect(upstream.received).toHaveLength(0);
    });

    it.each(Object.keys(surface.wrongTypes))(
      "answers a body where %s with a native 400 INVALID_REQUEST",
      async (name) => {
        const response = await post(surface.route, JSON.stringify(surface.wrongTypes[name]));
        await expectNativeError(surface.name, response, 400, "INVALID_REQUEST");
        expect(upstream.received).toHaveLength(0);
      },
    );

    it("never echoes the request's prompt text in an error body or header", async () => {
      const bodies: BodyInit[] = [
        badBodies["unparseable JSON"]!,
        badBodies["a top-level array"]!,
        badBodies["a top-level string"]!,
        badBodies["invalid UTF-8 bytes"]!,
        ...Object.values(surface.wrongTypes).map((body) => JSON.stringify(body)),
      ];
      for (const body of bodies) {
        const response = await post(surface.route, body, { "x-promptgate-call": "bad-input" });
        expect(response.status).toBe(400);
        expect(headerText(response)).not.toContain(marker);
        expect(await response.text()).not.toContain(marker);
      }
    });

    it("accepts a lone surrogate escape as valid JSON and counts it as one code point", async () => {
      const text = "a\\ud800b\\udc00😀";
      const body = JSON.stringify(surface.call("LONE")).replace('"LONE"', `"${text}"`);
      const response = await post(surface.route, body);
      expect(response.status).toBe(200);
      expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null")).toMatchObject({
        message_chars: 5,
      });
      expect(upstream.received[0]?.body).toBe(body);
    });

    it("answers an unknown route below the surface with a native 404", async () => {
      const { method, path } = surface.unknownRoute;
      const response = await app.request(path, { method, body: "{}" });
      await expectNativeError(surface.name, response, 404, "NOT_FOUND");
      const pinned = await app.request(`/policies/investigation.bounded${path}`, {
        method,
        body: "{}",
      });
      await expectNativeError(surface.name, pinned, 404, "NOT_FOUND");
      expect(upstream.received).toHaveLength(0);
    });

    it("answers GET on its generate route with a native 405", async () => {
      const response = await app.request(surface.route);
      await expectNativeError(surface.name, response, 405, "METHOD_NOT_ALLOWED");
      expect(upstream.received).toHaveLength(0);
    });

    it("answers an unknown pinned policy version with a native 404 POLICY_NOT_FOUND that does not echo the ref", async () => {
      const response = await post(
        `/policies/investigation.bounded@000000000000${surface.route}`,
        JSON.stringify(surface.call("hi")),
      );
      const text = await expectNativeError(surface.name, response, 404, "POLICY_NOT_FOUND");
      expect(text).not.toContain("000000000000");
      expect(text).not.toContain("investigation.bounded@");
      // It lists the names a client may use instead, not the reference it was given.
      expect(text).toContain("Known policies: case.interpretation, default, investigation.bounded,");
      expect(headerText(response)).not.toContain("000000000000");
      expect(upstream.received).toHaveLength(0);
    });

    it("answers a deeply nested tool declaration with a native 400 INVALID_REQUEST", async () => {
      const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
      const body = JSON.stringify(surface.call("hi", ["DEEP"])).replace('"DEEP"', deep);
      const response = await post(surface.route, body);
      await expectNativeError(surface.name, response, 400, "INVALID_REQUEST");
      expect(upstream.received).toHaveLength(0);
    });
  });

  it("names the allowed method in the Allow header of a 405", async () => {
    const response = await app.request("/openai/v1/chat/completions");
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("answers a malformed percent-escape in the Gemini model name with a native 400", async () => {
    const response = await post(
      "/gemini/v1beta/models/%E0%A4%A:generateContent",
      JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    );
    await expectNativeError(gemini.name, response, 400, "INVALID_REQUEST");
    expect(upstream.received).toHaveLength(0);
  });

  it("answers an unknown top-level path with a plain JSON 404", async () => {
    const response = await app.request("/v1/chat/completions", { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const ref = response.headers.get("x-promptgate-ref");
    expect(ref).toMatch(refPattern);
    expect(await response.json()).toEqual({
      error: {
        code: "NOT_FOUND",
        message: expect.any(String),
        promptgate: { code: "NOT_FOUND", ref, retryable: false },
      },
    });
    expect(upstream.received).toHaveLength(0);
  });

  it("answers GET /healthz with 200 without calling a provider", async () => {
    const response = await app.request("/healthz");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-ref")).toMatch(refPattern);
    expect(upstream.received).toHaveLength(0);
  });

  it("lists the four shipped policies with refs name@<12 hex>", async () => {
    const response = await app.request("/promptgate/policies");
    expect(response.status).toBe(200);
    const { policies } = (await response.json()) as { policies: { ref: string; name: string; sha256: string }[] };
    expect(policies.map((policy) => policy.name).sort()).toEqual([
      "case.interpretation",
      "default",
      "investigation.bounded",
      "investigation.bounded.v1",
    ]);
    for (const policy of policies) {
      expect(policy.ref).toMatch(/^[a-z0-9.]+@[0-9a-f]{12}$/);
      expect(policy.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(policy.ref).toBe(`${policy.name}@${policy.sha256.slice(0, 12)}`);
    }
  });
});
