import { describe, expect, it } from "vitest";
import type { CallLogLine } from "../../src/record/call-log-line.js";
import { callLogger, nodeLogger } from "../../src/runtime/node/call-logger.js";

/**
 * A call's JSON log line is built by the gateway itself rather than by pino (see `jsonLine`). pino is the oracle:
 * for generated lines, the gateway's text must be pino's own for the same logger, byte for byte but the time.
 */

/** A small seeded generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Quotes, backslashes, control characters, ASCII, Latin-1, other planes (no lone surrogates: pino writes them raw,
// where JSON.stringify escapes them, and the gateway's members hold none).
const alphabet = [
  '"',
  "\\",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "\u007f",
  "a",
  "Z",
  "0",
  " ",
  "/",
  "ß",
  "é",
  "€",
  "😀",
  "中",
];

function text(next: () => number): string {
  const length = Math.floor(next() * (next() < 0.1 ? 140 : 24));
  let out = "";
  for (let index = 0; index < length; index++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

function maybe<T>(next: () => number, value: () => T): T | undefined {
  return next() < 0.3 ? undefined : value();
}

function number(next: () => number): number {
  const kinds = [0, 1, 12_345, 2 ** 40, 0.5, -3, Number.NaN, Number.POSITIVE_INFINITY];
  return next() < 0.5 ? (kinds[Math.floor(next() * kinds.length)] as number) : Math.floor(next() * 1e7);
}

function callLine(next: () => number): CallLogLine {
  return {
    ref: `ref_${text(next)}`,
    policy: maybe(next, () => text(next)),
    case: maybe(next, () => text(next)),
    call_label: maybe(next, () => text(next)),
    surface: text(next),
    provider: text(next),
    model: maybe(next, () => text(next)),
    route: text(next),
    decision: (["sent", "rejected", "failed", "cancelled"] as const)[Math.floor(next() * 4)] as CallLogLine["decision"],
    preflight_total_chars: maybe(next, () => number(next)),
    preflight_conservative_total_chars: maybe(next, () => number(next)),
    provider_total_chars: maybe(next, () => number(next)),
    upstream_status: maybe(next, () => number(next)),
    upstream_reason: maybe(next, () => text(next)),
    duration_ms: number(next),
    error: maybe(next, () => (next() < 0.3 ? "internal" : text(next))),
  };
}

const withoutTime = (line: string) => line.replace(/,"time":"[^"]*"/, "");

describe("a call's JSON log line", () => {
  it("is pino's line for the same logger, for 20,000 generated lines", () => {
    const written: string[] = [];
    const logger = nodeLogger({ logLevel: "info", logFormat: "json" }, { write: (line: string) => written.push(line) });
    const log = callLogger(logger);
    const next = random(21);
    for (let index = 0; index < 20_000; index++) {
      const line = callLine(next);
      log({ ...line });
      const level = line.error === "internal" ? "error" : line.error === undefined ? "info" : "warn";
      logger[level]({ ...line }, "call");
      expect(written).toHaveLength(2);
      const [ours, pinos] = written.splice(0, 2) as [string, string];
      expect(ours).toMatch(/^\{"level":"[a-z]+","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",/);
      expect(withoutTime(ours)).toBe(withoutTime(pinos));
    }
  });

  it("keeps the credential guard and the level: a key is dropped, a line below the level is not written", () => {
    const written: string[] = [];
    const logger = nodeLogger({ logLevel: "warn", logFormat: "json" }, { write: (line: string) => written.push(line) });
    const log = callLogger(logger);
    const line = callLine(random(7));
    log({ ...line, error: undefined });
    expect(written).toEqual([]);
    log({ ...line, error: "upstream", authorization: "Bearer sk-secret" } as CallLogLine);
    expect(written).toHaveLength(1);
    const parsed = JSON.parse(written[0] as string);
    expect(parsed).toMatchObject({ level: "warn", msg: "call", service: "promptgate", error: "upstream" });
    expect(written[0]).not.toContain("sk-secret");
  });
});
