import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/config.js";

/** The message `readConfig` refuses `environment` with. */
function refusal(environment: Record<string, string>): string {
  try {
    readConfig(environment);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected a ConfigError");
}

describe("a configuration variable with a bad value", () => {
  it.each([
    ["PORT", "eighty", 'PORT="eighty" must be a whole number from 0 to 65535 (unset: 8787).'],
    [
      "PROMPTGATE_MAX_BODY_BYTES",
      "10MB",
      'PROMPTGATE_MAX_BODY_BYTES="10MB" must be a whole number of at least 1 (unset: 10485760).',
    ],
    [
      "PROMPTGATE_MAX_CONNECTIONS",
      "many",
      'PROMPTGATE_MAX_CONNECTIONS="many" must be a whole number from 1 to 10000000 (unset: from the open-file limit).',
    ],
    [
      "PROMPTGATE_LOG",
      "verbose",
      'PROMPTGATE_LOG="verbose" must be one of trace, debug, info, warn, error, fatal, silent (unset: info).',
    ],
    [
      "PROMPTGATE_LOG_FORMAT",
      "xml",
      'PROMPTGATE_LOG_FORMAT="xml" must be one of json, pretty (unset: pretty on a terminal, else json).',
    ],
    [
      "PROMPTGATE_UPSTREAM_GEMINI",
      "generativelanguage.googleapis.com",
      'PROMPTGATE_UPSTREAM_GEMINI="generativelanguage.googleapis.com" must be an http(s) URL such as https://generativelanguage.googleapis.com, or "simulated".',
    ],
  ])("%s=%s is refused naming the variable, the value and what it takes", (variable, value, message) => {
    expect(refusal({ [variable]: value })).toBe(message);
  });

  it("is refused in one line", () => {
    expect(refusal({ PORT: "a\nb" })).not.toContain("\n");
  });

  it("shows an upstream URL without its user, password or query", () => {
    const message = refusal({ PROMPTGATE_UPSTREAM_OPENAI: "ftp://user:hunter22@proxy.example/v1?key=secret-value" });
    expect(message).toBe(
      'PROMPTGATE_UPSTREAM_OPENAI="ftp://proxy.example/v1" must be an http(s) URL such as https://api.openai.com/v1, or "simulated".',
    );
  });

  it("redacts a provider key pasted into the wrong variable", () => {
    const message = refusal({ PROMPTGATE_LOG: "sk-proj-abcdefghijklmnop" });
    expect(message).not.toContain("abcdefghijklmnop");
    expect(message).toContain("PROMPTGATE_LOG=");
  });

  it("never shows the value of PROMPTGATE_KEYS, which holds keys", () => {
    expect(refusal({ PROMPTGATE_KEYS: " , ,, " })).toBe(
      "PROMPTGATE_KEYS holds no key, only commas and spaces: list the gateway keys separated by commas, or unset it for pass-through auth.",
    );
  });

  it("names both timeouts and their values when the header timeout exceeds the request timeout", () => {
    expect(refusal({ PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "60", PROMPTGATE_REQUEST_TIMEOUT_SECONDS: "30" })).toBe(
      "PROMPTGATE_HEADERS_TIMEOUT_SECONDS=60 exceeds PROMPTGATE_REQUEST_TIMEOUT_SECONDS=30: lower the first or raise the second.",
    );
  });
});

describe("PROMPTGATE_LOG_FORMAT", () => {
  it("is unset by default, leaving the choice to whether stdout is a terminal", () => {
    expect(readConfig({}).logFormat).toBeUndefined();
  });

  it.each([
    ["json", "json"],
    ["pretty", "pretty"],
    ["PRETTY", "pretty"],
  ])("takes %s", (value, format) => {
    expect(readConfig({ PROMPTGATE_LOG_FORMAT: value }).logFormat).toBe(format);
  });
});
