import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";

describe("the Node server's limits", () => {
  it("default to 10 s for headers, 120 s for a request, 5 s of keep-alive, a 30 s drain and a derived connection cap", () => {
    expect(readConfig({}).server).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: undefined,
      drainMs: 30_000,
    });
  });

  it("are read in seconds, and the cap as a count", () => {
    const environment = {
      PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "2",
      PROMPTGATE_REQUEST_TIMEOUT_SECONDS: "3",
      PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS: "65",
      PROMPTGATE_MAX_CONNECTIONS: "500",
      PROMPTGATE_DRAIN_SECONDS: "0",
    };
    expect(readConfig(environment).server).toEqual({
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 3_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 500,
      drainMs: 0,
    });
  });

  it("refuse a header timeout longer than the request timeout, as Node would", () => {
    expect(() =>
      readConfig({ PROMPTGATE_HEADERS_TIMEOUT_SECONDS: "30", PROMPTGATE_REQUEST_TIMEOUT_SECONDS: "20" }),
    ).toThrow(
      "PROMPTGATE_HEADERS_TIMEOUT_SECONDS=30 exceeds PROMPTGATE_REQUEST_TIMEOUT_SECONDS=20: lower the first or raise the second.",
    );
  });

  it.each([
    ["PROMPTGATE_HEADERS_TIMEOUT_SECONDS", "0"],
    ["PROMPTGATE_REQUEST_TIMEOUT_SECONDS", "1.5"],
    ["PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS", "soon"],
    ["PROMPTGATE_MAX_CONNECTIONS", "0"],
    ["PROMPTGATE_DRAIN_SECONDS", "-1"],
  ])("refuse %s=%s, naming the variable and the value", (variable, value) => {
    expect(() => readConfig({ [variable]: value })).toThrow(
      new RegExp(`^${variable}="${value}" must be a whole number`),
    );
  });
});
