import { describe, expect, it } from "vitest";
import { startDeadline } from "../../src/pipeline/deadline.js";
import type { UpstreamCall } from "../../src/pipeline/upstream-call.js";
import { upstreamRequest } from "../../src/pipeline/upstream-request.js";
import type { UpstreamCredential } from "../../src/routing/upstream-credential.js";
import { anthropicSurface } from "../../src/surfaces/anthropic/anthropic-surface.js";
import { geminiSurface } from "../../src/surfaces/gemini/gemini-surface.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";
import type { Surface } from "../../src/surfaces/surface.js";

const gatewayKey = "GWKEY-0123456789abcdef";
const serverKey = "sk-server-key-0123456789";

/** A call on `surface` for the client URL `path` (below the mount, with its query). */
function callOf(surface: Surface, path: string, credential: UpstreamCredential): UpstreamCall {
  const url = new URL(`http://gateway.test${surface.mount}${path}`);
  return {
    ref: "ref_0123456789abcdef",
    surface,
    caller: { principal: async () => "", key: undefined },
    provider: surface,
    translated: false,
    streamed: false,
    upstream: { baseUrl: "https://provider.test", simulated: false, label: "provider", serverKey },
    request: new Request(url),
    client: new AbortController().signal,
    url,
    credential,
    deadline: startDeadline(60),
    secrets: () => [gatewayKey, serverKey],
    timing: {},
  };
}

const gatewayMode: UpstreamCredential = { kind: "server", key: serverKey };
const passThrough: UpstreamCredential = { kind: "client" };

/** The query the provider would receive for the client's own call. */
async function forwardedQuery(
  surface: Surface,
  route: string,
  query: string,
  credential = gatewayMode,
): Promise<string> {
  return new URL((await upstreamRequest(callOf(surface, `${route}${query}`, credential), route, undefined)).url).search;
}

describe("the query sent upstream", () => {
  it("drops every OpenAI query parameter the proxied routes do not take, a key among them", async () => {
    const query = `?key=${gatewayKey}&api_key=${gatewayKey}&access_token=${gatewayKey}`;
    expect(await forwardedQuery(openaiSurface, "/chat/completions", query)).toBe("");
    expect(await forwardedQuery(openaiSurface, "/chat/completions", query, passThrough)).toBe("");
  });

  it("keeps the OpenAI parameters of a stored response's retrieval and input items", async () => {
    expect(await forwardedQuery(openaiSurface, "/responses/resp_1", "?stream=true&starting_after=2&debug=1")).toBe(
      "?stream=true&starting_after=2",
    );
    expect(
      await forwardedQuery(
        openaiSurface,
        "/responses/resp_1/input_items",
        "?limit=5&order=asc&after=it_1&include[]=x&x=1",
      ),
    ).toBe("?limit=5&order=asc&after=it_1&include%5B%5D=x");
  });

  it("drops every Anthropic query parameter but beta", async () => {
    expect(await forwardedQuery(anthropicSurface, "/v1/messages", `?beta=true&key=${gatewayKey}&api_key=x`)).toBe(
      "?beta=true",
    );
  });

  it("matches Gemini's parameters exactly, so ?KEY= and ?key;= never pass", async () => {
    const query = `?alt=sse&KEY=${gatewayKey}&key;=${gatewayKey}&Alt=json&%20key=${gatewayKey}`;
    expect(await forwardedQuery(geminiSurface, "/v1beta/models/m:streamGenerateContent", query)).toBe("?alt=sse");
    expect(await forwardedQuery(geminiSurface, "/v1beta/models/m:streamGenerateContent", query, passThrough)).toBe(
      "?alt=sse",
    );
  });

  it("re-encodes a kept value, so a `;` inside it cannot become a parameter of its own", async () => {
    expect(await forwardedQuery(geminiSurface, "/v1beta/models/m:generateContent", `?alt=sse;key=${gatewayKey}`)).toBe(
      `?alt=sse%3Bkey%3D${gatewayKey}`,
    );
  });

  it("keeps Gemini's key in pass-through (once) and drops it in gateway-key mode", async () => {
    const route = "/v1beta/models/m:generateContent";
    expect(await forwardedQuery(geminiSurface, route, "?key=client-key&alt=json&key=other", passThrough)).toBe(
      "?key=client-key&alt=json",
    );
    expect(await forwardedQuery(geminiSurface, route, `?key=${gatewayKey}&alt=json`)).toBe("?alt=json");
  });

  it("keeps the paging of Gemini's lists and the mask of a cache patch", async () => {
    expect(await forwardedQuery(geminiSurface, "/v1beta/cachedContents", "?pageSize=2&pageToken=abc&filter=x")).toBe(
      "?pageSize=2&pageToken=abc",
    );
    expect(await forwardedQuery(geminiSurface, "/v1beta/cachedContents/c1", "?updateMask=ttl&fields=x")).toBe(
      "?updateMask=ttl",
    );
  });

  it("gives a request the gateway makes itself no query of the client's but its pass-through key", async () => {
    const route = "/v1beta/models/m:generateContent";
    const own = async (credential: UpstreamCredential) =>
      new URL(
        (
          await upstreamRequest(
            callOf(geminiSurface, `${route}?alt=sse&key=client-key`, credential),
            route,
            undefined,
            "GET",
          )
        ).url,
      ).search;
    expect(await own(passThrough)).toBe("?key=client-key");
    expect(await own(gatewayMode)).toBe("");
  });
});
