import { investigationSchema } from "../../bench/fixtures.js";
import { largeSchema as investigationCopies } from "../../bench/large-schemas.js";

/** A `$ref` cycle that never descends into the answer: the gateway must refuse it (400), never loop on it. */
export const recursiveSchema = { allOf: [{ $ref: "#" }] };

/** The default `validation.max_schema_chars`: a client schema longer than this (compact JSON) gets 400. */
export const maxSchemaChars = 100_000;

/** Room for the last copy the bench's generator adds past its target. */
const copyChars = 2 * JSON.stringify(investigationSchema).length;

/**
 * A distinct schema of exactly `chars` characters as compact JSON: the bench's copies of the
 * investigation schema, padded by a description that carries `salt`. Nothing is required at the
 * top, so the answer `{}` is valid against it.
 */
export function largeSchema(chars: number, salt: string): Record<string, unknown> {
  const schema = { description: "", ...investigationCopies(chars - copyChars, salt) };
  schema.description = `${salt} `.padEnd(chars - JSON.stringify(schema).length, "x");
  return schema;
}

/** The sizes the soak cycles through: most within the cap, two in eight above it, none within 5,000 of it. */
export const largeSchemaSizes = [50_000, 60_000, 70_000, 80_000, 90_000, 95_000, 105_000, 110_000] as const;

/**
 * A `$ref` chain of unions, each level an `anyOf` of four alternatives that all name the next
 * level, ending in an integer. An answer that fails it (`unionChainFailingAnswer`) made a validator try every path
 * through the alternatives: 16 s at depth 7, over 5 minutes at depth 8.
 */
export function unionChainSchema(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) {
    const next = { $ref: `#/$defs/l${level + 1}` };
    $defs[`l${level}`] = {
      anyOf: [
        { type: "object", properties: { v: next, k: { type: "string" } }, required: ["v"] },
        { type: "object", properties: { v: next, n: { type: "number" } }, required: ["v", "n"] },
        { type: "array", items: next },
        { type: "object", properties: { v: next }, additionalProperties: false, minProperties: 2 },
      ],
    };
  }
  $defs[`l${depth}`] = { type: "integer" };
  return { $ref: "#/$defs/l0", $defs };
}

/** `{"v": … {"v": "x"}}` nested `depth` deep: every path through `unionChainSchema(depth)` ends in a string, not an integer. */
export function unionChainFailingAnswer(depth: number): string {
  let value: unknown = "x";
  for (let level = 0; level < depth; level++) value = { v: value };
  return JSON.stringify(value);
}

/**
 * `$defs` d0 … d(depth-1), each an `anyOf` of four refs to the next, the last a bounded string
 * (1.2 KB at depth 12). The window signature inlined every path: 4^11 alternatives, a 201 MB answer.
 */
export function alternativesChainSchema(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) {
    $defs[`d${level}`] =
      level === depth - 1
        ? { type: "string", maxLength: 10 }
        : { anyOf: Array.from({ length: 4 }, () => ({ $ref: `#/$defs/d${level + 1}` })) };
  }
  return { $defs, $ref: "#/$defs/d0" };
}
