import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withoutCredentialFields } from "../../src/record/credential-fields.js";
import { nodeLogger } from "../../src/runtime/node/call-logger.js";

/** The rule written apart from the code: a JSON round trip that drops the names at the top and one level down. */
function oracle(line: Record<string, unknown>): Record<string, unknown> {
  const top = ["authorization", "key", "api_key", "headers"];
  const inner = ["authorization", "key"];
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(line)) {
    if (top.includes(name.toLowerCase())) continue;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      result[name] = Object.fromEntries(
        Object.entries(value).filter(([innerName]) => !inner.includes(innerName.toLowerCase())),
      );
    } else result[name] = value;
  }
  return result;
}

const names = fc.oneof(
  fc.constantFrom("authorization", "Authorization", "KEY", "key", "api_key", "Api_Key", "headers", "HEADERS"),
  fc.constantFrom("ref", "keys", "apikey", "header", "auth", "upstream", "monkey", "x-key"),
  fc.string({ maxLength: 8 }),
);
const leaf = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
);
const line = fc.dictionary(names, fc.oneof(leaf, fc.dictionary(names, leaf, { maxKeys: 5 })), { maxKeys: 8 });

describe("the guard that keeps credentials out of log lines", () => {
  it("drops the credential names at the top and one level down, in any case, as the oracle does", () => {
    fc.assert(
      fc.property(line, (fields) => {
        const before = structuredClone(fields);
        const guarded = withoutCredentialFields(fields);
        expect(guarded).toEqual(oracle(fields));
        // The caller's object is never changed, and one without such a field is given back as it is.
        expect(fields).toEqual(before);
        if (JSON.stringify(oracle(fields)) === JSON.stringify(fields)) expect(guarded).toBe(fields);
      }),
      { numRuns: 5_000 },
    );
  });

  it("keeps them out of every line of the Node log, not only a call's", () => {
    const written: string[] = [];
    const logger = nodeLogger(
      { logLevel: "info", logFormat: "json" },
      { write: (text: string) => void written.push(text) },
    );
    logger.info({ event: "listening", Authorization: "Bearer sk-1", upstream: { key: "sk-2", url: "u" } }, "up");
    logger.warn({ api_key: "sk-3", headers: { cookie: "c" }, ref: "ref_1" }, "call");
    const [first, second] = written.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(first).toMatchObject({ event: "listening", upstream: { url: "u" }, msg: "up" });
    expect(first).not.toHaveProperty("Authorization");
    expect(first?.upstream).not.toHaveProperty("key");
    expect(second).toMatchObject({ ref: "ref_1", level: "warn" });
    expect(second).not.toHaveProperty("api_key");
    expect(second).not.toHaveProperty("headers");
    expect(written.join("")).not.toContain("sk-");
  });
});
