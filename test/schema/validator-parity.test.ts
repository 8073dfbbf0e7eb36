import { generateSync, type JsonSchema } from "json-schema-faker";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import type { CompileOutcome } from "../../src/schema/compiled-validator.js";
import { validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { interpretedSchemaCompiling } from "../../src/schema/interpret-schema.js";
import { realWorldSchemas } from "./fixtures/real-world-schemas.js";

/**
 * Both validators on the real-world schemas: each schema's generated answers (json-schema-faker, seeds 1..6), as
 * generated and with one to three random breakages each (a value replaced by another of another type, a member
 * dropped or added, an item repeated), must get the same outcome and the same diagnostics from Ajv (Node) and from
 * the interpretive validator (Workers). Any difference fails, with the answer that shows it.
 */

const seeds = [1, 2, 3, 4, 5, 6];
const breakagesPerAnswer = 8;

/** A small deterministic generator (a linear congruential one), so that every run breaks answers alike. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

type Path = (string | number)[];

function pathsOf(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) pathsOf(item, [...path, index], out);
  } else if (typeof value === "object" && value !== null) {
    for (const [name, member] of Object.entries(value)) pathsOf(member, [...path, name], out);
  }
  return out;
}

const replacements: readonly unknown[] = ["CANARY", 12_345.5, true, null, { zz: 1 }, [1, "x"], -7, "", 3];

/** The answer with one to three breakages, as JSON would carry it. */
function broken(answer: unknown, next: () => number): unknown {
  let root: unknown = structuredClone(answer);
  const paths = pathsOf(root);
  const count = 1 + Math.floor(next() * 3);
  for (let index = 0; index < count; index++) {
    const path = paths[Math.floor(next() * paths.length)] ?? [];
    const replacement = structuredClone(replacements[Math.floor(next() * replacements.length)]);
    if (path.length === 0) {
      root = replacement;
      continue;
    }
    let parent: unknown = root;
    for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, unknown> | null)?.[step];
    if (typeof parent !== "object" || parent === null) continue;
    const container = parent as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    const kind = next();
    if (kind < 0.15 && !Array.isArray(parent)) delete container[last];
    else if (kind < 0.3 && !Array.isArray(parent)) container[`unknown_${index}`] = replacement;
    else if (kind < 0.4 && Array.isArray(parent) && parent.length > 0) parent.push(parent[0]);
    else container[last] = replacement;
  }
  return JSON.parse(JSON.stringify(root) ?? "null");
}

/**
 * The schema as the generator reads it: json-schema-faker 0.6 follows no `$ref` to an `$anchor` and reads no draft-07
 * tuple (`items` as an array): those become a JSON pointer and `prefixItems`. Validation uses the schema itself.
 */
function generatorView(schema: unknown): JsonSchema {
  const anchors = new Map<string, string>();
  const collect = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) collect(item, `${pointer}/${index}`);
    } else if (typeof node === "object" && node !== null) {
      const record = node as Record<string, unknown>;
      if (typeof record.$anchor === "string") anchors.set(`#${record.$anchor}`, `#${pointer}`);
      for (const [name, member] of Object.entries(record)) {
        collect(member, `${pointer}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`);
      }
    }
  };
  collect(schema, "");
  return JSON.parse(JSON.stringify(schema), (key, value) => {
    if (key === "$ref" && typeof value === "string") return anchors.get(value) ?? value;
    if (typeof value === "object" && value !== null && Array.isArray(value.items) && !("enum" in value)) {
      const { items, additionalItems, ...rest } = value;
      return { ...rest, prefixItems: items, ...(additionalItems !== undefined && { items: additionalItems }) };
    }
    return value;
  });
}

const ajv = ajvSchemaCompiling();
const interpretive = interpretedSchemaCompiling();

function validatorOf(outcome: CompileOutcome) {
  if ("refusal" in outcome) throw new Error(`refused: ${outcome.refusal}`);
  return outcome.validator;
}

describe("Ajv and the interpretive validator on real-world schemas and broken answers", () => {
  it.each(realWorldSchemas)("give identical diagnostics for $name", ({ schema }) => {
    const key = canonicalJson(schema);
    const byAjv = ajv.compile(schema, key);
    const byInterpretation = interpretive.compile(schema, key);
    expect("refusal" in byInterpretation ? byInterpretation.refusal : "compiled").toBe(
      "refusal" in byAjv ? byAjv.refusal : "compiled",
    );
    if ("refusal" in byAjv) return;
    const differences: unknown[] = [];
    let invalid = 0;
    for (const seed of seeds) {
      const generated = JSON.parse(
        JSON.stringify(generateSync(generatorView(schema), { seed, refDepthMax: 3 })) ?? "null",
      );
      const next = random(seed * 7919);
      for (let index = 0; index <= breakagesPerAnswer; index++) {
        const answer = index === 0 ? generated : broken(generated, next);
        const expected = validateParsedAnswer(validatorOf(byAjv), answer);
        const actual = validateParsedAnswer(validatorOf(byInterpretation), answer);
        if (!expected.valid) invalid += 1;
        if (JSON.stringify(actual) !== JSON.stringify(expected)) differences.push({ answer, expected, actual });
      }
    }
    expect(differences).toEqual([]);
    expect(invalid, "the breakages make most answers invalid").toBeGreaterThan(seeds.length * breakagesPerAnswer * 0.5);
  });
});
