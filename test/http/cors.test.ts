import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/config.js";
import { browserRequestHeaders, exposedHeaders, requestedHeadersAllowed } from "../../src/http/cors.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { appUnderTest } from "../support/app-under-test.js";

// CORS through app.request(), without a socket; runs on Node and in workerd (test/http is shared).

const page = "http://app.example.test:5173";

/** The headers the openai browser build asks for in its preflight (lowercase, sorted, as Chromium sends them). */
const openAIRequestHeaders =
  "authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-package-version," +
  "x-stainless-retry-count,x-stainless-runtime,x-stainless-runtime-version,x-stainless-timeout";

const gatewayApp = appUnderTest;

function preflight(method: string, requestHeaders: string, origin = page): RequestInit {
  return {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": requestHeaders },
  };
}

function chat(content: string, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test", origin: page, ...headers },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
  };
}

describe("CORS with PROMPTGATE_CORS_ORIGINS unset", () => {
  it("adds no CORS header to an answer", async () => {
    const { app } = await gatewayApp({});
    const response = await app.request("/openai/v1/chat/completions", chat("Hello"));
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);
  });

  it("leaves a preflight to the route, which does not take OPTIONS", async () => {
    const { app, records } = await gatewayApp({});
    const response = await app.request("/openai/v1/chat/completions", preflight("POST", "authorization"));
    expect(response.status).toBe(405);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(records).toHaveLength(1);
  });
});

describe("CORS for listed origins", () => {
  const environment = { PROMPTGATE_CORS_ORIGINS: `https://other.example.test, ${page}` };

  it("answers a preflight of a listed origin with 204, the methods and the SDK's headers, and records nothing", async () => {
    const { app, records } = await gatewayApp(environment);
    const response = await app.request("/openai/v1/chat/completions", preflight("POST", openAIRequestHeaders));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(page);
    expect(response.headers.get("access-control-allow-methods")).toBe("GET,HEAD,POST,PATCH,DELETE");
    expect(response.headers.get("access-control-allow-headers")).toBe(openAIRequestHeaders);
    expect(response.headers.get("access-control-max-age")).toBe("600");
    expect(response.headers.get("vary")).toContain("Origin");
    expect(records).toEqual([]);
  });

  it.each([
    ["/gemini/v1beta/models/gemini-2.5-flash:generateContent", "content-type,x-goog-api-client,x-goog-api-key"],
    [
      "/anthropic/v1/messages",
      "anthropic-dangerous-direct-browser-access,anthropic-version,content-type,x-api-key,x-stainless-retry-count",
    ],
    ["/policies/investigation.bounded/openai/v1/responses", "authorization,content-type,x-promptgate-case"],
    ["/policies/investigation.bounded@0123456789ab/gemini/v1beta/cachedContents/c1", "x-goog-api-key"],
  ])("answers a preflight on %s", async (path, requestHeaders) => {
    const { app, records } = await gatewayApp(environment);
    const response = await app.request(path, preflight("POST", requestHeaders));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(page);
    expect(response.headers.get("access-control-allow-headers")).toBe(requestHeaders);
    expect(records).toEqual([]);
  });

  it("answers a preflight before the key check, which the call itself then meets", async () => {
    const { app, records } = await gatewayApp({ ...environment, PROMPTGATE_KEYS: "gateway-key" });
    const answered = await app.request("/openai/v1/chat/completions", preflight("POST", "authorization"));
    expect(answered.status).toBe(204);
    const refused = await app.request("/openai/v1/chat/completions", chat("Hello", { authorization: "Bearer wrong" }));
    expect(refused.status).toBe(401);
    // The page can read why it was refused.
    expect(refused.headers.get("access-control-allow-origin")).toBe(page);
    expect(records).toEqual([]);
  });

  it("lists only the fixed header names when a preflight asks for a header no SDK sends", async () => {
    const { app } = await gatewayApp(environment);
    const response = await app.request(
      "/openai/v1/chat/completions",
      preflight("POST", "authorization,x-forwarded-host"),
    );
    expect(response.status).toBe(204);
    const allowed = response.headers.get("access-control-allow-headers")?.split(",") ?? [];
    expect(allowed).toContain("authorization");
    expect(allowed).not.toContain("x-forwarded-host");
    expect(response.headers.get("vary")?.toLowerCase()).toContain("access-control-request-headers");
  });

  it("gives a preflight of an unlisted origin no allowed origin, so the browser refuses the call", async () => {
    const { app, records } = await gatewayApp(environment);
    const response = await app.request(
      "/openai/v1/chat/completions",
      preflight("POST", "authorization", "https://evil.example.test"),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(records).toEqual([]);
  });

  it("lets a listed origin read the answer and every x-promptgate header", async () => {
    const { app } = await gatewayApp(environment);
    const response = await app.request("/openai/v1/chat/completions", chat("Hello"));
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(page);
    expect(response.headers.get("access-control-expose-headers")?.split(",")).toEqual(exposedHeaders);
    expect(response.headers.get("vary")).toContain("Origin");
    expect(response.headers.get("x-promptgate-prompt-size")).not.toBeNull();
  });

  it("lets a listed origin read a rejection and its retry hint", async () => {
    const { app } = await gatewayApp(environment);
    const response = await app.request(
      "/policies/investigation.bounded/openai/v1/chat/completions",
      chat("x".repeat(20_000)),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get("access-control-allow-origin")).toBe(page);
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(response.headers.get("access-control-expose-headers")).toContain("x-should-retry");
  });

  it("sends an OPTIONS request that is no preflight to its route, as without CORS", async () => {
    const { app, records } = await gatewayApp(environment);
    const response = await app.request("/openai/v1/chat/completions", {
      method: "OPTIONS",
      headers: { origin: page },
    });
    expect(response.status).toBe(405);
    expect(records).toHaveLength(1);
  });

  it("keeps the admin routes same-origin", async () => {
    const { app } = await gatewayApp({ ...environment, PROMPTGATE_ADMIN_KEY: "admin-key" });
    const response = await app.request("/promptgate/admin/calls?case=C1", {
      headers: { origin: page, authorization: "Bearer admin-key" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("lets a page read the health, readiness and policy list", async () => {
    const { app } = await gatewayApp(environment);
    for (const path of ["/healthz", "/readyz", "/promptgate/policies"]) {
      const response = await app.request(path, { headers: { origin: page } });
      expect(response.headers.get("access-control-allow-origin")).toBe(page);
    }
  });
});

describe("CORS for any origin", () => {
  it("allows every origin with *", async () => {
    const { app } = await gatewayApp({ PROMPTGATE_CORS_ORIGINS: "*" });
    const answered = await app.request(
      "/anthropic/v1/messages",
      preflight("POST", "x-api-key", "https://anywhere.example.test"),
    );
    expect(answered.status).toBe(204);
    expect(answered.headers.get("access-control-allow-origin")).toBe("*");
    expect(answered.headers.get("access-control-allow-headers")).toBe("x-api-key");
  });
});

describe("PROMPTGATE_CORS_ORIGINS", () => {
  it("reads comma-separated origins, ignoring blanks", () => {
    const config = readConfig({ PROMPTGATE_CORS_ORIGINS: " https://a.example.test ,,http://127.0.0.1:5173 " });
    expect(config.corsOrigins).toEqual(["https://a.example.test", "http://127.0.0.1:5173"]);
  });

  it("means no CORS when unset or empty", () => {
    expect(readConfig({}).corsOrigins).toBeUndefined();
    expect(readConfig({ PROMPTGATE_CORS_ORIGINS: " " }).corsOrigins).toBeUndefined();
  });

  it.each(["https://a.example.test/", "https://a.example.test/app", "a.example.test", "https://*.example.test"])(
    "refuses %s, which no browser sends as an origin",
    (origin) => {
      expect(() => readConfig({ PROMPTGATE_CORS_ORIGINS: origin })).toThrow(ConfigError);
      expect(() => readConfig({ PROMPTGATE_CORS_ORIGINS: origin })).toThrow(/PROMPTGATE_CORS_ORIGINS/);
    },
  );
});

describe("the request headers a preflight may ask for", () => {
  const allowed = browserRequestHeaders(surfaces);

  it.each([
    "authorization",
    "Content-Type",
    "x-goog-api-key, x-goog-api-client",
    "anthropic-version,anthropic-beta,anthropic-dangerous-direct-browser-access",
    "openai-organization,openai-project,x-stainless-helper-method",
    "x-promptgate-case,x-promptgate-call,x-promptgate-schema",
  ])("allows %s", (requested) => {
    expect(requestedHeadersAllowed(requested, allowed)).toBe(true);
  });

  it.each(["cookie", "authorization,x-forwarded-for", "x-stainless"])("refuses %s", (requested) => {
    expect(requestedHeadersAllowed(requested, allowed)).toBe(false);
  });
});
