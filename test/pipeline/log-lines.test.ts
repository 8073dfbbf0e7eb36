import { describe, expect, it } from "vitest";
import { callLabels } from "../../src/pipeline/call-labels.js";
import { internalErrorLine } from "../../src/record/internal-error-line.js";
import { logLines } from "../../src/record/log-entry.js";
import { refusalCounter } from "../../src/record/refusal-count.js";

describe("counting requests refused before authentication", () => {
  it("yields the first refusal's line at once, then one line a minute with the count since the last", () => {
    const count = refusalCounter(60_000);
    expect(count(0)).toMatchObject({ count: 1, total: 1, since: new Date(0).toISOString() });
    for (let second = 1; second < 60; second++) expect(count(second * 1000)).toBeUndefined();
    expect(count(61_000)).toEqual({
      event: "refused_unauthenticated",
      count: 60,
      total: 61,
      since: new Date(1_000).toISOString(),
    });
    expect(count(62_000)).toBeUndefined();
  });

  it("writes a refusal as a counted warning, never as a line of its own", () => {
    const linesOf = logLines(refusalCounter(60_000));
    expect(linesOf({ event: "refused_unauthenticated" }, 0)).toMatchObject({ level: "warn", line: { count: 1 } });
    expect(linesOf({ event: "refused_unauthenticated" }, 1)).toBeUndefined();
  });
});

describe("the log line of an internal error", () => {
  it("holds the class and the stack, with quoted text masked and keys redacted", () => {
    const error = new TypeError(`Unexpected token, "the client's prompt" is not valid JSON (key sk-live-abcdef123456)`);
    const line = internalErrorLine("ref_0123456789abcdef", error, "call", ["secret-of-the-gateway"]);
    expect(line).toMatchObject({
      event: "internal_error",
      ref: "ref_0123456789abcdef",
      class: "TypeError",
      during: "call",
    });
    expect(line.stack).toMatch(/^TypeError: Unexpected token, \[quoted\]/);
    expect(line.stack).toMatch(/\n\s+at /);
    expect(line.stack).not.toContain("the client's prompt");
    expect(line.stack).not.toContain("sk-live-abcdef123456");
  });

  it("follows the error's causes, redacting the known secrets in each", () => {
    const cause = new Error("connect failed for secret-of-the-gateway");
    const line = internalErrorLine("ref_1", new Error("store failed", { cause }), "remember-prefix", [
      "secret-of-the-gateway",
    ]);
    expect(line.stack).toContain("caused by: Error: connect failed for [redacted]");
  });

  it("names the class of an error that keeps the inherited name, and shows nothing of a thrown non-error", () => {
    class StoreFailure extends Error {}
    expect(internalErrorLine("ref_1", new StoreFailure("x"), "call", []).class).toBe("StoreFailure");
    const thrown = internalErrorLine("ref_1", "the prompt itself", "call", []);
    expect(thrown).toMatchObject({ class: "string" });
    expect(thrown.stack).not.toContain("prompt");
  });
});

describe("the case and call label headers", () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it("takes 1 to 256 printable ASCII characters", () => {
    expect(
      callLabels(headers({ "x-promptgate-case": "C-1", "x-promptgate-call": `step 2: ${"a".repeat(248)}` })),
    ).toEqual({
      caseId: "C-1",
      callLabel: `step 2: ${"a".repeat(248)}`,
    });
    expect(callLabels(headers({}))).toEqual({ caseId: undefined, callLabel: undefined });
  });

  it.each([
    ["x-promptgate-case", "c".repeat(257)],
    ["x-promptgate-case", ""],
    ["x-promptgate-call", "\u00e9t\u00e9"],
  ])("refuses %s with 400 INVALID_REQUEST naming the header, not the value", (name, value) => {
    const error = (() => {
      try {
        callLabels(headers({ [name]: value }));
      } catch (caught) {
        return caught as { code: string; status: number; message: string; details: { param?: string } };
      }
    })();
    expect(error).toMatchObject({ code: "INVALID_REQUEST", status: 400, details: { param: name } });
    if (value !== "") expect(error?.message).not.toContain(value);
  });
});
