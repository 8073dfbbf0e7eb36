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
