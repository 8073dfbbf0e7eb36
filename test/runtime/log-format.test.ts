import { describe, expect, it } from "vitest";
import { callLogger, type LogSettings, nodeLogger } from "../../src/runtime/node/call-logger.js";
import { startNodeGateway } from "../../src/runtime/node/node-gateway.js";

/** A destination that keeps what is written, optionally claiming to be a terminal. */
function capture(isTTY = false) {
  const written: string[] = [];
  return { written, destination: { isTTY, write: (text: string) => void written.push(text) } };
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** Logs the lines a gateway writes most: a start-up line, a call's, a step at debug. */
function logSome(settings: LogSettings, isTTY = false): string[] {
  const { written, destination } = capture(isTTY);
  const logger = nodeLogger(settings, destination);
  logger.info({ event: "listening", url: "http://127.0.0.1:8787" }, "promptgate listening on http://127.0.0.1:8787");
  const log = callLogger(logger);
  log({
    ref: "ref_00000000000000aa",
    policy: "default@0123456789ab",
    case: undefined,
    call_label: undefined,
    surface: "openai",
    provider: "simulated",
    model: "gpt-4.1-mini",
    route: "/chat/completions",
    decision: "failed",
    preflight_total_chars: 12,
    preflight_conservative_total_chars: 2012,
    provider_total_chars: 12,
    upstream_status: undefined,
    upstream_reason: "ECONNREFUSED",
    duration_ms: 4,
    error: "upstream",
  });
  return written
    .join("")
    .split("\n")
    .filter((line) => line !== "");
}

const json: LogSettings = { logLevel: "info", logFormat: "json" };

describe("the Node log's format", () => {
  it("is one JSON object per line with PROMPTGATE_LOG_FORMAT=json", () => {
    const lines = logSome(json);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(isJson(line), line).toBe(true);
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: "warn", msg: "call", model: "gpt-4.1-mini" });
  });

  it("is lines for a person, not JSON, with PROMPTGATE_LOG_FORMAT=pretty", () => {
    const lines = logSome({ logLevel: "info", logFormat: "pretty" });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(isJson(line), line).toBe(false);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: promptgate listening on http:\/\/127\.0\.0\.1:8787 /);
    expect(lines[1]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: call .*"upstream_reason":"ECONNREFUSED"/);
    // No colour codes where the lines go to no terminal.
    expect(lines.join("")).not.toContain("\u001b[");
  });

  it("is pretty, in colour, when unset and the lines go to a terminal", () => {
    const lines = logSome({ logLevel: "info", logFormat: undefined }, true);
    for (const line of lines) expect(isJson(line), line).toBe(false);
    expect(lines.join("")).toContain("\u001b[");
  });

  it("is JSON when unset and the lines go to no terminal", () => {
    const lines = logSome({ logLevel: "info", logFormat: undefined }, false);
    for (const line of lines) expect(isJson(line), line).toBe(true);
  });

  it("is JSON when PROMPTGATE_LOG_FORMAT=json even on a terminal", () => {
    const lines = logSome(json, true);
    for (const line of lines) expect(isJson(line), line).toBe(true);
  });

  it("drops lines below PROMPTGATE_LOG's level in either format", () => {
    expect(logSome({ logLevel: "error", logFormat: "pretty" })).toEqual([]);
    expect(logSome({ logLevel: "silent", logFormat: "json" })).toEqual([]);
  });

  it("reaches a gateway's call lines: PROMPTGATE_LOG_FORMAT=pretty writes them for a person", async () => {
    const { written, destination } = capture();
    const gateway = await startNodeGateway(
      { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", PROMPTGATE_LOG_FORMAT: "pretty" },
      { logDestination: destination },
    );
    try {
      const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer simulated" },
        body: JSON.stringify({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "Say hello." }] }),
      });
      expect(response.status).toBe(200);
    } finally {
      await gateway.close();
    }
    const lines = written
      .join("")
      .split("\n")
      .filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(isJson(lines[0]!)).toBe(false);
    expect(lines[0]).toMatch(/ INFO: call \{.*"model":"gpt-4\.1-mini".*"decision":"sent"/);
  });
});
