import { generateSync, type JsonSchema } from "json-schema-faker";
import { inPlaceCycle } from "../schema/ref-cycles.js";
import { schemaListKeywords, schemaMapKeywords, schemaValueKeywords } from "../schema/schema-nodes.js";
import { isJsonObject } from "./json-value.js";

/**
 * Schemas the faker walks once per value it makes (~2,300 walks for a 100,000-character schema, ~20 µs
 * each); past this many, the schema asks for more than a stand-in should make and the answer falls back.
 */
export const maxFakerWalks = 5_000;

/** Where a schema allows longer, faked strings and arrays stay this short (still within every bound). */
const shortest = { maxLength: 1_000, maxItems: 20, maxProperties: 20, maxContains: 20 };

/** A schema demanding more than this many characters, items or properties is not faked: it would be too large. */
const largestMinimum = 1_000;

const minimumKeywords = ["minLength", "minItems", "minProperties", "minContains"];

class OverBudget extends Error {}

/**
 * A document faked from the schema, as compact JSON, within a fixed budget of work; undefined when the
 * faker cannot make one in it: a `false` schema, `$ref`s that loop without moving into the answer (the
 * faker would merge them forever), minimums too large to fake, or more walks than `maxFakerWalks`.
 * `refDepthMax: 3` keeps recursive schemas finite without the faker's depth-cut `null`s, which would break
 * conformance. Deterministic: the budget counts walks, not time.
 */
export function fakeDocument(schema: unknown, seed: number): string | undefined {
  if (typeof schema !== "boolean" && !isJsonObject(schema)) return undefined;
  try {
    if (inPlaceCycle(schema) !== undefined) return undefined;
    const bounded = boundedCopy(schema);
    if (bounded === undefined) return undefined;
    let walks = 0;
    // The faker reads its property aliases once for every schema it walks: an accessor there counts the walks.
    const meter = {
      get "x-promptgate-walk"() {
        walks += 1;
        if (walks > maxFakerWalks) throw new OverBudget();
        return "x-promptgate-walk";
      },
    };
    return JSON.stringify(generateSync(bounded as JsonSchema, { seed, refDepthMax: 3, propAliases: meter }));
  } catch {
    return undefined;
  }
}

/**
 * A copy of the schema with every upper bound on lengths and counts lowered to `shortest` where the
 * schema allows that (never below its minimum), or undefined when a minimum or a pattern asks for more
 * than `largestMinimum`. Only subschema keywords are walked: `enum`, `const` and examples stay as they are.
 */
function boundedCopy(node: unknown): unknown {
  if (!isJsonObject(node)) return node;
  if (minimumKeywords.some((keyword) => typeof node[keyword] === "number" && node[keyword] > largestMinimum)) {
    return undefined;
  }
  if (typeof node.pattern === "string" && largestQuantifier(node.pattern) > largestMinimum) return undefined;
  const copy: Record<string, unknown> = { ...node };
  for (const [bound, value] of Object.entries(shortest)) {
    const current = node[bound];
    const minimum = node[`min${bound.slice(3)}`];
    if (typeof current === "number" && current > value) {
      copy[bound] = Math.max(value, typeof minimum === "number" ? minimum : 0);
    }
  }
  for (const keyword of schemaValueKeywords) {
    if (!isJsonObject(node[keyword])) continue;
    copy[keyword] = boundedCopy(node[keyword]);
    if (copy[keyword] === undefined) return undefined;
  }
  for (const keyword of schemaListKeywords) {
    const list = node[keyword];
    if (!Array.isArray(list)) continue;
    copy[keyword] = list.map(boundedCopy);
    if ((copy[keyword] as unknown[]).includes(undefined)) return undefined;
  }
  for (const keyword of schemaMapKeywords) {
    const map = node[keyword];
    if (!isJsonObject(map)) continue;
    const entries = Object.entries(map).map(([name, child]) => [name, boundedCopy(child)] as const);
    if (entries.some(([, child]) => child === undefined)) return undefined;
    copy[keyword] = Object.fromEntries(entries);
  }
  return copy;
}

/** The largest count a regex quantifier (`{5}`, `{2,9}`) in a pattern asks for; the faker makes that many. */
function largestQuantifier(pattern: string): number {
  let largest = 0;
  for (const match of pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) {
    largest = Math.max(largest, Number(match[1]), Number(match[2] || 0));
  }
  return largest;
}
