import { canonicalJson } from "../json/canonical-json.js";
import { type PreparedSchema, preparedSchema, type SchemaDialect } from "./prepare-schema.js";
import { inPlaceCycle } from "./ref-cycles.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import type { SchemaRefusal } from "./schema-refusals.js";
import type { ValidatorError } from "./validator-error.js";

export type { SchemaDialect } from "./prepare-schema.js";

/** A full response schema, ready to validate answers and to explain their failures. */
export interface CompiledValidator {
  /** The answer's failures in the validator-neutral form; none when it is valid. */
  readonly validate: (answer: unknown) => readonly ValidatorError[];
  /** The schema as prepared (local `$ref`s inlined where possible): every error's `schemaPath` points into it. */
  readonly schema: unknown;
  readonly dialect: SchemaDialect;
  /** The deepest answer it checks, where that is less than an answer may nest; a deeper one is `nesting`. */
  readonly maxDepth?: number;
}

/** A validator made ahead of time for a schema known at build time (on Workers, Ajv standalone code). */
export interface PrecompiledValidator {
  /** Canonical JSON of the schema as a request sends or names it (before it is prepared). */
  readonly key: string;
  readonly validator: CompiledValidator;
}

/** What compiling a client's schema gave: a validator and how to let go of what holds it, or why not. */
export type CompileOutcome = { validator: CompiledValidator; release?: () => void } | { refusal: SchemaRefusal };

/** One way of compiling response schemas in place: Ajv's code generation on Node, interpretation on Workers. */
export interface SchemaCompiling {
  /** Compiles a full response schema; `key` is its canonical JSON. Never throws for the schema's sake. */
  compile(schema: unknown, key: string): CompileOutcome;
  /** Bytes, by estimate, that one compiled validator holds per code point of its schema. */
  readonly bytesPerSchemaChar: number;
}

/**
 * Compiles a full response schema as every runtime does: refused when it is no schema, when a `$ref` cycle never
 * moves into the answer (a validator would check the same value against the same schema until its stack ends), when
 * it nests too deeply to walk, or when `compilePrepared` cannot take it (e.g. an external `$ref`).
 */
export function guardedCompile<T extends object>(
  schema: unknown,
  compilePrepared: (prepared: PreparedSchema) => T | { refusal: SchemaRefusal },
): T | { refusal: SchemaRefusal } {
  if (typeof schema !== "boolean" && !isSchemaNode(schema)) return { refusal: "invalid" };
  try {
    if (inPlaceCycle(schema) !== undefined) return { refusal: "cycle" };
    return compilePrepared(preparedSchema(schema));
  } catch (error) {
    // Every walk here recurses over the schema; one deep enough to exhaust the stack is refused, not a 500.
    if (error instanceof RangeError) return { refusal: "too-complex" };
    throw error;
  }
}

/** Pairs a validate function made at build time from `schema` (prepared as at run time) with that schema. */
export function precompiledValidator(
  schema: SchemaNode | boolean,
  validate: (answer: unknown) => readonly ValidatorError[],
): PrecompiledValidator {
  const { dialect, prepared } = preparedSchema(schema);
  return { key: canonicalJson(schema), validator: { validate, schema: prepared, dialect } };
}
