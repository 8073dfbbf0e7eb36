import { describe, expect, it } from "vitest";
import { upstreamFailure } from "../../src/errors/classify.js";
import { anthropicSurface } from "../../src/surfaces/anthropic/anthropic-surface.js";
import { geminiSurface } from "../../src/surfaces/gemini/gemini-surface.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";

const ref = "ref_0123456789abcdef";
const surfaces = [openaiSurface, geminiSurface, anthropicSurface];

describe("rendering a classified upstream failure natively", () => {
  it.each(surfaces.map((surface) => [surface.name, surface] as const))(
    "gives %s's client the provider's retry information for a rate limit",
    (_name, surface) => {
      const rendered = surface.renderError(upstreamFailure("rate_limit", 429, "raw", [], 34_400), ref);
      expect(rendered.status).toBe(429);
      expect(rendered.headers).toMatchObject({ "retry-after-ms": "34400", "retry-after": "35" });
      expect(rendered.headers["x-should-retry"]).toBeUndefined();
      expect(JSON.stringify(rendered.body)).not.toContain("raw");
    },
  );

  it.each(surfaces.map((surface) => [surface.name, surface] as const))(
    "tells %s's SDK not to retry an exhausted quota",
    (_name, surface) => {
      const rendered = surface.renderError(upstreamFailure("quota", 429, "raw", [], 5_000), ref);
      expect(rendered.headers["x-should-retry"]).toBe("false");
      expect(rendered.headers["retry-after"]).toBeUndefined();
    },
  );

  it("carries Gemini's retry delay as a RetryInfo detail", () => {
    const rendered = geminiSurface.renderError(upstreamFailure("rate_limit", 429, "", [], 34_400), ref);
    expect((rendered.body as { error: { status: string; details: unknown[] } }).error).toMatchObject({
      status: "RESOURCE_EXHAUSTED",
      details: [
        { reason: "rate_limit", domain: "promptgate" },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" },
      ],
    });
  });

  it("names quota natively: OpenAI's insufficient_quota, Anthropic's billing_error", () => {
    const quota = upstreamFailure("quota", 429, "", []);
    expect(openaiSurface.renderError(quota, ref).body).toMatchObject({ error: { type: "insufficient_quota" } });
    expect(anthropicSurface.renderError(quota, ref).body).toMatchObject({ error: { type: "billing_error" } });
  });
});

describe("the native stream error event", () => {
  const error = upstreamFailure("upstream", undefined, "raw", []);

  it("is a data object with an error member for OpenAI and Gemini", () => {
    for (const surface of [openaiSurface, geminiSurface]) {
      const frame = surface.renderStreamError(error, ref);
      expect(frame).toMatch(/^data: .*\n\n$/);
      expect(JSON.parse(frame.slice("data: ".length))).toHaveProperty("error.promptgate.code", "upstream");
    }
  });

  it("is an error event for Anthropic", () => {
    const frame = anthropicSurface.renderStreamError(error, ref);
    expect(frame).toMatch(/^event: error\ndata: .*\n\n$/);
    expect(JSON.parse(frame.split("\n")[1]?.slice("data: ".length) ?? "")).toMatchObject({
      type: "error",
      error: { type: "api_error", code: "upstream" },
    });
  });
});
