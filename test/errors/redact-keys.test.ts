import { describe, expect, it } from "vitest";
import { redactKeys } from "../../src/errors/redact-keys.js";
import { durationMs, retryAfterOf } from "../../src/errors/retry-after.js";

describe("redacting keys from upstream text", () => {
  it.each([
    ["an OpenAI project key", "bad key sk-proj-AbC123xyz_-789 given", "bad key [redacted] given"],
    ["an Anthropic key", "x-api-key sk-ant-api03-AAAABBBBCCCC was refused", "x-api-key [redacted] was refused"],
    ["a masked key as OpenAI echoes it", "provided: sk-proj-****wxyz.", "provided: [redacted]"],
    ["a Google API key", "key AIzaSyA1234567890abcdefghij invalid", "key [redacted] invalid"],
    ["a bearer token", "Authorization: Bearer abc.def.ghi", "Authorization: Bearer [redacted]"],
    ["a key query parameter", "GET /v1beta/models?key=secret123&alt=sse", "GET /v1beta/models?key=[redacted]&alt=sse"],
  ])("replaces %s", (_name, text, expected) => {
    expect(redactKeys(text, [])).toBe(expected);
  });

  it("replaces every known secret, the longest first", () => {
    expect(redactKeys("gw-key-1 and gw-key-10 leaked", ["gw-key-1", "gw-key-10"])).toBe(
      "[redacted] and [redacted] leaked",
    );
  });

  it("leaves secrets shorter than four characters alone rather than garble the text", () => {
    expect(redactKeys("abc model", ["abc"])).toBe("abc model");
  });
});

describe("reading retry information", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");

  it("prefers retry-after-ms to retry-after", () => {
    expect(retryAfterOf({ "retry-after-ms": "250", "retry-after": "9" }, now)).toBe(250);
  });

  it("reads retry-after in seconds", () => {
    expect(retryAfterOf({ "retry-after": "2.5" }, now)).toBe(2_500);
  });

  it("reads retry-after as an HTTP date, never below zero", () => {
    expect(retryAfterOf({ "retry-after": new Date(now + 5_000).toUTCString() }, now)).toBe(5_000);
    expect(retryAfterOf({ "retry-after": new Date(now - 5_000).toUTCString() }, now)).toBe(0);
  });

  it("ignores malformed and absurd values", () => {
    expect(retryAfterOf({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(retryAfterOf({ "retry-after-ms": "-1" }, now)).toBeUndefined();
    expect(retryAfterOf({ "retry-after": "9999999" }, now)).toBeUndefined();
    expect(retryAfterOf({}, now)).toBeUndefined();
  });

  it("reads a protobuf duration as Google's RetryInfo gives it", () => {
    expect(durationMs("34.4s")).toBe(34_400);
    expect(durationMs("58s")).toBe(58_000);
    expect(durationMs("58")).toBeUndefined();
    expect(durationMs(58)).toBeUndefined();
  });
});
