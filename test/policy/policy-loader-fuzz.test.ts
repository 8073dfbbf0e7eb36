import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";

/**
 * The policy loader over random TOML-ish text and mutated shipped policies: it either loads or
 * throws a PolicyFileError naming the file, never another exception, and never hangs.
 */

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

const shipped = ["default", "investigation.bounded", "investigation.bounded.v1", "case.interpretation"].map((name) =>
  readFileSync(new URL(`../../policies/${name}.toml`, import.meta.url), "utf8"),
);

const seed = 20_260_706;
// Each load compiles the policy schema with Ajv (about 30 ms), so the run counts stay modest.

/** Loads `text` as `path`: "loaded", or the PolicyFileError; any other outcome fails the property. */
async function outcome(text: string, path: string): Promise<"loaded" | PolicyFileError> {
  const started = Date.now();
  const result = await loadPolicies([{ path, text }], policySchema).then(
    () => "loaded" as const,
    (error: unknown) => error,
  );
  expect(Date.now() - started, "loading took too long").toBeLessThan(2_000);
  if (result === "loaded") return result;
  expect(result, String(result instanceof Error ? result.stack : result)).toBeInstanceOf(PolicyFileError);
  const error = result as PolicyFileError;
  expect(error.file).toBe(path);
  expect(error.message.startsWith(`${path}: `)).toBe(true);
  expect(error.field).toEqual(expect.any(String));
  return error;
}

const fileName = fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}\.toml$/).map((name) => `policies/${name}`);

/** Tokens TOML is made of, and some it is not. */
const token = fc.oneof(
  fc.constantFrom(
    "[window]",
    "[upstream]",
    "[validation]",
    "[gemini]",
    "[[repair]]",
    "[upstream_errors]",
    "[window.x]",
    "[[window]]",
    "name",
    "enforce",
    "target_chars",
    "limit_chars",
    "reserve_chars",
    "deadline_seconds",
    "on_invalid",
    "text",
    " = ",
    "=",
    "\n",
    "\n\n",
    '"',
    "'",
    '"""',
    "'''",
    "true",
    "false",
    "inf",
    "nan",
    "-0",
    "1e400",
    "0x1F",
    "1979-05-27T07:32:00Z",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "#",
    "\\",
    "\\u",
    "\\uD800",
    "\u0000",
    "\uFEFF",
    "\r",
    "\t",
  ),
  fc.integer().map(String),
  fc.double().map(String),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 6 }).map((text) => JSON.stringify(text)),
);

const tomlish = fc.array(token, { maxLength: 80 }).map((tokens) => tokens.join(""));

type LineMutation =
  | { kind: "delete"; at: number }
  | { kind: "duplicate"; at: number }
  | { kind: "replace-value"; at: number; value: string }
  | { kind: "insert"; at: number; text: string }
  | { kind: "truncate"; at: number }
  | { kind: "swap"; at: number; with: number };

const value = fc.oneof(
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom("true", "false", '""', "[]", "{}", "inf", "-1", "0", "1e308", '"error"', '"passthrough"', "nan"),
  fc.string({ maxLength: 10 }).map((text) => JSON.stringify(text)),
  fc.string({ maxLength: 10 }),
);

const lineMutation: fc.Arbitrary<LineMutation> = fc.oneof(
  fc.nat().map((at) => ({ kind: "delete" as const, at })),
  fc.nat().map((at) => ({ kind: "duplicate" as const, at })),
  fc.tuple(fc.nat(), value).map(([at, replacement]) => ({ kind: "replace-value" as const, at, value: replacement })),
  fc.tuple(fc.nat(), tomlish).map(([at, text]) => ({ kind: "insert" as const, at, text })),
  fc.nat().map((at) => ({ kind: "truncate" as const, at })),
  fc.tuple(fc.nat(), fc.nat()).map(([at, other]) => ({ kind: "swap" as const, at, with: other })),
);

function applyMutation(text: string, mutation: LineMutation): string {
  const lines = text.split("\n");
  const at = mutation.at % lines.length;
  switch (mutation.kind) {
    case "delete":
      lines.splice(at, 1);
      break;
    case "duplicate":
      lines.splice(at, 0, lines[at]!);
      break;
    case "replace-value": {
      const line = lines[at]!;
      const equals = line.indexOf("=");
      lines[at] = equals === -1 ? `${line}${mutation.value}` : `${line.slice(0, equals + 1)} ${mutation.value}`;
      break;
    }
    case "insert":
      lines.splice(at, 0, mutation.text);
      break;
    case "truncate":
      return text.slice(0, mutation.at % (text.length + 1));
    case "swap": {
      const other = mutation.with % lines.length;
      [lines[at], lines[other]] = [lines[other]!, lines[at]!];
      break;
    }
  }
  return lines.join("\n");
}

describe("fuzzing the policy loader", () => {
  it("loads random TOML-ish text or refuses it with a PolicyFileError naming the file", async () => {
    await fc.assert(
      fc.asyncProperty(tomlish, fileName, async (text, path) => {
        await outcome(text, path);
      }),
      { numRuns: 120, seed },
    );
  });

  it("loads arbitrary strings or refuses them with a PolicyFileError", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 300 }), async (text) => {
        await outcome(text, "policies/random.toml");
      }),
      { numRuns: 60, seed },
    );
  });

  it("loads mutated shipped policies or refuses them with a PolicyFileError", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...shipped),
        fc.array(lineMutation, { minLength: 1, maxLength: 5 }),
        fileName,
        async (text, mutations, path) => {
          await outcome(mutations.reduce(applyMutation, text), path);
        },
      ),
      { numRuns: 150, seed },
    );
  });

  it("refuses deeply nested inline tables and arrays with a PolicyFileError, not a stack overflow", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 50_000 }),
        fc.constantFrom("array", "table"),
        async (depth, kind) => {
          const deep =
            kind === "array"
              ? `${"[".repeat(depth)}1${"]".repeat(depth)}`
              : `${"{a=".repeat(depth)}1${"}".repeat(depth)}`;
          await outcome(`name = "deep"\nextra = ${deep}\n`, "policies/deep.toml");
        },
      ),
      { numRuns: 20, seed },
    );
  });

  it("names the offending file when several are loaded", async () => {
    await fc.assert(
      fc.asyncProperty(tomlish, async (text) => {
        const files = [
          { path: "policies/default.toml", text: shipped[0]! },
          { path: "policies/fuzzed.toml", text },
        ];
        const result = await loadPolicies(files, policySchema).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (result === undefined) return;
        expect(result).toBeInstanceOf(PolicyFileError);
        expect((result as PolicyFileError).file).toBe("policies/fuzzed.toml");
      }),
      { numRuns: 40, seed },
    );
  });
});
