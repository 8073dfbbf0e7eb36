import { describe, expect, it } from "vitest";
import { classifyTransportFailure, classifyUpstreamAnswer } from "../../src/errors/classify.js";
import { transientClasses, upstreamErrorMessages } from "../../src/errors/error-classes.js";
import { anthropicSurface } from "../../src/surfaces/anthropic/anthropic-surface.js";
import { geminiSurface } from "../../src/surfaces/gemini/gemini-surface.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";
import type { Surface } from "../../src/surfaces/surface.js";
import { anthropicBodies, geminiBodies, openaiBodies } from "./provider-error-bodies.js";

interface Case {
  name: string;
  status: number | undefined;
  body: unknown;
  headers?: Record<string, string>;
  code: string;
  clientStatus: number;
  retryAfterMs?: number;
}

const now = Date.parse("2026-11-30T12:00:00Z");

function classify(surface: Surface, status: number | undefined, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return classifyUpstreamAnswer({ status, headers, text }, { recognise: surface.classifyError, now, secrets: [] });
}

const openaiCases: Case[] = [
  {
    name: "429 insufficient_quota",
    status: 429,
    body: openaiBodies.insufficientQuota,
    code: "quota",
    clientStatus: 429,
  },
  {
    name: "429 rate_limit_exceeded with retry-after-ms",
    status: 429,
    body: openaiBodies.rateLimitExceeded,
    headers: { "retry-after-ms": "1500", "retry-after": "2" },
    code: "rate_limit",
    clientStatus: 429,
    retryAfterMs: 1500,
  },
  {
    name: "401 invalid_api_key",
    status: 401,
    body: openaiBodies.invalidApiKey,
    code: "authentication",
    clientStatus: 401,
  },
  {
    name: "401 mismatched_organization",
    status: 401,
    body: openaiBodies.mismatchedOrganization,
    code: "account_selection",
    clientStatus: 401,
  },
  { name: "404 model_not_found", status: 404, body: openaiBodies.modelNotFound, code: "model", clientStatus: 404 },
  {
    name: "400 context_length_exceeded (the client's request)",
    status: 400,
    body: openaiBodies.contextLengthExceeded,
    code: "INVALID_REQUEST",
    clientStatus: 400,
  },
  { name: "500 server_error", status: 500, body: openaiBodies.serverError, code: "upstream", clientStatus: 502 },
  {
    name: "503 engine overloaded",
    status: 503,
    body: openaiBodies.engineOverloaded,
    code: "worker",
    clientStatus: 503,
  },
  {
    name: "502 from a proxy, as HTML",
    status: 502,
    body: "<html>Bad gateway</html>",
    code: "upstream",
    clientStatus: 502,
  },
  {
    name: "a Responses stream's error event",
    status: undefined,
    body: openaiBodies.responsesStreamError,
    code: "rate_limit",
    clientStatus: 429,
  },
];

const anthropicCases: Case[] = [
  { name: "529 overloaded_error", status: 529, body: anthropicBodies.overloaded, code: "worker", clientStatus: 529 },
  {
    name: "429 rate_limit_error with retry-after",
    status: 429,
    body: anthropicBodies.rateLimit,
    headers: { "retry-after": "17" },
    code: "rate_limit",
    clientStatus: 429,
    retryAfterMs: 17_000,
  },
  {
    name: "401 authentication_error",
    status: 401,
    body: anthropicBodies.authentication,
    code: "authentication",
    clientStatus: 401,
  },
  {
    name: "403 permission_error",
    status: 403,
    body: anthropicBodies.permission,
    code: "authentication",
    clientStatus: 403,
  },
  { name: "404 model not found", status: 404, body: anthropicBodies.modelNotFound, code: "model", clientStatus: 404 },
  {
    name: "400 credit balance too low",
    status: 400,
    body: anthropicBodies.creditBalance,
    code: "quota",
    clientStatus: 429,
  },
  { name: "402 billing_error", status: 402, body: anthropicBodies.billing, code: "quota", clientStatus: 429 },
  {
    name: "400 prompt too long (the client's request)",
    status: 400,
    body: anthropicBodies.promptTooLong,
    code: "INVALID_REQUEST",
    clientStatus: 400,
  },
  {
    name: "413 request_too_large",
    status: 413,
    body: anthropicBodies.requestTooLarge,
    code: "PAYLOAD_TOO_LARGE",
    clientStatus: 413,
  },
  { name: "500 api_error", status: 500, body: anthropicBodies.apiError, code: "upstream", clientStatus: 502 },
  { name: "504 timeout_error", status: 504, body: anthropicBodies.timeout, code: "timeout", clientStatus: 504 },
  {
    name: "an overloaded_error event inside a stream",
    status: undefined,
    body: anthropicBodies.overloaded,
    code: "worker",
    clientStatus: 503,
  },
];

const geminiCases: Case[] = [
  {
    name: "429 per-minute QuotaFailure with RetryInfo",
    status: 429,
    body: geminiBodies.perMinuteWithRetryInfo,
    code: "rate_limit",
    clientStatus: 429,
    retryAfterMs: 34_400,
  },
  { name: "429 per-day QuotaFailure", status: 429, body: geminiBodies.perDay, code: "quota", clientStatus: 429 },
  {
    name: "429 QuotaFailure without rate details",
    status: 429,
    body: geminiBodies.quotaWithoutRateDetails,
    code: "quota",
    clientStatus: 429,
  },
  {
    name: "429 RESOURCE_EXHAUSTED without details",
    status: 429,
    body: geminiBodies.bareExhausted,
    code: "rate_limit",
    clientStatus: 429,
  },
  {
    name: "400 API_KEY_INVALID",
    status: 400,
    body: geminiBodies.apiKeyInvalid,
    code: "authentication",
    clientStatus: 401,
  },
  {
    name: "403 PERMISSION_DENIED",
    status: 403,
    body: geminiBodies.permissionDenied,
    code: "authentication",
    clientStatus: 403,
  },
  {
    name: "403 SERVICE_DISABLED",
    status: 403,
    body: geminiBodies.serviceDisabled,
    code: "account_selection",
    clientStatus: 403,
  },
  {
    name: "400 FAILED_PRECONDITION (location not supported)",
    status: 400,
    body: geminiBodies.locationNotSupported,
    code: "account_selection",
    clientStatus: 403,
  },
  { name: "404 model not found", status: 404, body: geminiBodies.modelNotFound, code: "model", clientStatus: 404 },
  {
    name: "403 cached content not found",
    status: 403,
    body: geminiBodies.cachedContentNotFound,
    code: "NOT_FOUND",
    clientStatus: 404,
  },
  {
    name: "400 INVALID_ARGUMENT (the client's request)",
    status: 400,
    body: geminiBodies.invalidArgument,
    code: "INVALID_REQUEST",
    clientStatus: 400,
  },
  {
    name: "503 UNAVAILABLE (model overloaded)",
    status: 503,
    body: geminiBodies.overloaded,
    code: "worker",
    clientStatus: 503,
  },
  { name: "500 INTERNAL", status: 500, body: geminiBodies.internal, code: "upstream", clientStatus: 502 },
  {
    name: "504 DEADLINE_EXCEEDED",
    status: 504,
    body: geminiBodies.deadlineExceeded,
    code: "timeout",
    clientStatus: 504,
  },
  {
    name: "a stream's final error frame (no HTTP status)",
    status: undefined,
    body: geminiBodies.overloaded,
    code: "worker",
    clientStatus: 503,
  },
];

describe.each([
  ["openai", openaiSurface, openaiCases],
  ["anthropic", anthropicSurface, anthropicCases],
  ["gemini", geminiSurface, geminiCases],
] as const)("classifying %s's native error bodies", (_name, surface, cases) => {
  it.each(cases.map((entry) => [entry.name, entry] as const))("%s", (_title, entry) => {
    const error = classify(surface, entry.status, entry.body, entry.headers);
    expect(error.code).toBe(entry.code);
    expect(error.status).toBe(entry.clientStatus);
    expect(error.retryable).toBe(transientClasses.has(entry.code));
    expect(error.message).toBe(upstreamErrorMessages[error.code as keyof typeof upstreamErrorMessages]);
    expect(error.details.retryAfterMs).toBe(entry.retryAfterMs);
    expect(error.details.upstreamError).toMatchObject({ class: entry.code });
    if (entry.status !== undefined) expect(error.details.upstreamError?.status).toBe(entry.status);
  });
});

describe("classifying by status alone", () => {
  it.each([
    [401, "authentication", 401],
    [403, "authentication", 403],
    [404, "NOT_FOUND", 404],
    [408, "timeout", 504],
    [409, "INVALID_REQUEST", 409],
    [413, "PAYLOAD_TOO_LARGE", 413],
    [422, "INVALID_REQUEST", 422],
    [429, "rate_limit", 429],
    [500, "upstream", 502],
    [502, "upstream", 502],
    [503, "worker", 503],
    [504, "timeout", 504],
    [529, "worker", 529],
  ])("gives a %i with an unreadable body the class %s and the client status %i", (status, code, clientStatus) => {
    for (const surface of [openaiSurface, geminiSurface, anthropicSurface]) {
      const error = classify(surface, status, "not json");
      expect([error.code, error.status]).toEqual([code, clientStatus]);
    }
  });

  it("ignores a retry-after on a class that is not retryable", () => {
    const error = classify(openaiSurface, 429, openaiBodies.insufficientQuota, { "retry-after": "5" });
    expect(error.retryable).toBe(false);
    expect(error.details.retryAfterMs).toBeUndefined();
  });

  it("reads a retry-after given as an HTTP date relative to now", () => {
    const error = classify(anthropicSurface, 429, anthropicBodies.rateLimit, {
      "retry-after": new Date(now + 30_000).toUTCString(),
    });
    expect(error.details.retryAfterMs).toBe(30_000);
  });

  it("prefers the retry-after header over the body's RetryInfo", () => {
    const error = classify(geminiSurface, 429, geminiBodies.perMinuteWithRetryInfo, { "retry-after": "3" });
    expect(error.details.retryAfterMs).toBe(3_000);
  });
});

describe("what the record keeps of an upstream failure", () => {
  it("keeps the provider's text with the echoed and the known keys redacted", () => {
    const secret = "sk-live-server-key-0123456789";
    const body = {
      error: {
        message: `Incorrect API key provided: sk-proj-****wxyz; also ${secret} and AIzaSyA1234567890abcdefghijklmnopqrstu`,
      },
    };
    const error = classifyUpstreamAnswer(
      { status: 401, headers: {}, text: JSON.stringify(body) },
      { recognise: openaiSurface.classifyError, now, secrets: [secret] },
    );
    const text = error.details.upstreamError?.text ?? "";
    expect(text).toContain("Incorrect API key provided");
    expect(text).not.toContain(secret);
    expect(text).not.toContain("sk-proj-****wxyz");
    expect(text).not.toContain("AIzaSyA1234567890");
    expect(error.message).not.toContain("Incorrect");
  });

  it("cuts a long text to a bounded length", () => {
    const error = classify(openaiSurface, 500, "x".repeat(100_000));
    expect(error.details.upstreamError?.text.length).toBe(2_000);
  });
});

describe("a provider call without an answer", () => {
  it("is a retryable timeout (504) when the deadline passed", () => {
    const error = classifyTransportFailure(new Error("aborted"), true, []);
    expect([error.code, error.status, error.retryable]).toEqual(["timeout", 504, true]);
    expect(error.message).toBe(upstreamErrorMessages.timeout);
  });

  it("is a retryable upstream failure (502) when the connection failed, its cause kept for the record", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    const error = classifyTransportFailure(new TypeError("fetch failed", { cause: reset }), false, []);
    expect([error.code, error.status, error.retryable]).toEqual(["upstream", 502, true]);
    expect(error.details.upstreamError?.text).toContain("ECONNRESET");
    expect(error.message).not.toContain("ECONNRESET");
  });

  it("keeps no key a failure's message carries", () => {
    const cause = new Error(
      "connect ECONNREFUSED for https://host/v1beta/models/m:generateContent?key=AIzaSyB0000000000000000",
    );
    const text = classifyTransportFailure(cause, false, []).details.upstreamError?.text ?? "";
    expect(text).toContain("ECONNREFUSED");
    expect(text).not.toContain("AIzaSyB0000000000000000");
  });
});
