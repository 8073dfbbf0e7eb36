import { Ajv, type CodeOptions, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { canonicalJson } from "../json/canonical-json.js";
import { withDiscriminators } from "./diagnose-discriminators.js";
import { inlineLocalRefs } from "./diagnose-inline-refs.js";
import { inPlaceCycle } from "./ref-cycles.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import type { SchemaRefusal } from "./schema-refusals.js";

/** The JSON Schema dialect a schema is validated under (draft-04/06 schemas go to draft-07). */
export type SchemaDialect = "draft-07" | "2019-09" | "2020-12";

/** A full response schema, ready to validate answers and to explain their failures. */
export interface CompiledValidator {
  /** Ajv's validate function; after a call, its `errors` hold that call's failures. */
  readonly validate: ValidateFunction;
  /** The schema as compiled (local `$ref`s inlined where possible): every error's `schemaPath` points into it. */
  readonly schema: unknown;
  readonly dialect: SchemaDialect;
}

/** An Ajv instance of one of the three dialect classes. */
export type AjvInstance = Ajv | Ajv2019 | Ajv2020;

/** Gives the Ajv instance a schema of a dialect is compiled in, with or without Ajv's discriminator option. */
export type AjvFor = (dialect: SchemaDialect, discriminator: boolean) => AjvInstance;

/** A validator compiled ahead of time (Ajv standalone code) for a schema known at build time. */
export interface PrecompiledValidator {
  /** Canonical JSON of the schema as a request sends or names it (before `prepare`). */
  readonly key: string;
  readonly validator: CompiledValidator;
}

/** What compiling a client's schema gave: a validator and the Ajv instance that holds it, or why not. */
export type CompileOutcome = { validator: CompiledValidator; ajv: AjvInstance } | { refusal: SchemaRefusal };

/**
 * Compiles a full response schema as every runtime does: refused when it is no schema, when a `$ref`
 * cycle never moves into the answer (Ajv would compile it, then overflow its stack on every answer),
 * when it nests too deeply to walk, or when Ajv cannot compile it (e.g. an external `$ref`).
 */
export function compileResponseSchema(schema: unknown, ajvFor: AjvFor): CompileOutcome {
  if (typeof schema !== "boolean" && !isSchemaNode(schema)) return { refusal: "invalid" };
  try {
    if (inPlaceCycle(schema) !== undefined) return { refusal: "cycle" };
    const compiled = compileSchema(schema, ajvFor);
    return compiled ?? { refusal: "invalid" };
  } catch (error) {
    // Every walk here recurses over the schema; one deep enough to exhaust the stack is refused, not a 500.
    if (error instanceof RangeError) return { refusal: "too-complex" };
    throw error;
  }
}

/**
 * Compiles a schema exactly as `compiledValidator` does, in the Ajv instances `ajvFor` gives; undefined when it
 * cannot. Build-time code passes instances made with `code.source` to write the validator out as standalone code.
 */
export function compileSchema(
  schema: unknown,
  ajvFor: AjvFor,
): { validator: CompiledValidator; ajv: AjvInstance } | undefined {
  if (typeof schema !== "boolean" && !isSchemaNode(schema)) return undefined;
  const { dialect, prepared } = preparedSchema(schema);
  // Ajv validates only the alternative a `discriminator` names; an unusable one (e.g. with `mapping`) is ignored.
  const discriminatorSettings = JSON.stringify(prepared).includes('"discriminator"') ? [true, false] : [false];
  for (const discriminator of discriminatorSettings) {
    const ajv = ajvFor(dialect, discriminator);
    try {
      const validate = ajv.compile(prepared);
      return { validator: { validate, schema: prepared, dialect }, ajv };
    } catch {
      removeSchema(ajv, prepared);
    }
  }
  return undefined;
}

/** Pairs a standalone validate function written at build time by `compileSchema` with the schema it came from. */
export function precompiledValidator(schema: SchemaNode | boolean, validate: ValidateFunction): PrecompiledValidator {
  const { dialect, prepared } = preparedSchema(schema);
  return { key: canonicalJson(schema), validator: { validate, schema: prepared, dialect } };
}

/** A schema as it is compiled, and the dialect it is compiled under. */
export function preparedSchema(schema: SchemaNode | boolean): {
  dialect: SchemaDialect;
  prepared: SchemaNode | boolean;
} {
  if (typeof schema === "boolean") return { dialect: "2020-12", prepared: schema };
  return { dialect: dialectOf(schema.$schema), prepared: prepare(schema) };
}

/**
 * Without `$schema` (the chosen Ajv class stands for it), local references inlined (so error
 * paths run from the root) and tagged unions marked for Ajv's discriminator (so only the
 * alternative the tag names reports errors).
 */
function prepare(schema: SchemaNode): SchemaNode {
  const { $schema: _dialect, ...rest } = schema;
  return withDiscriminators(inlineLocalRefs(rest) ?? rest);
}

function dialectOf(metaSchema: unknown): SchemaDialect {
  const uri = typeof metaSchema === "string" ? metaSchema : "";
  if (/draft\/2019-09\b/.test(uri)) return "2019-09";
  if (/draft-0[4-7]\b/.test(uri)) return "draft-07";
  return "2020-12";
}

/** The Ajv instance `compiledValidator` compiles in; `code` e.g. `{ source: true, esm: true }` for standalone code. */
export function createAjv(dialect: SchemaDialect, discriminator: boolean, code?: CodeOptions): AjvInstance {
  // strict: false lets vendor keywords (x-*, propertyOrdering) and unknown formats pass; logger: false keeps them quiet.
  const options = {
    allErrors: true,
    strict: false,
    logger: false as const,
    discriminator,
    // 19.99 / 0.01 is not an integer in binary floating point; without a precision, valid prices fail.
    multipleOfPrecision: 9,
    // Diagnostics never show a validator's message, and the strings only make the code longer.
    messages: false,
    // Ajv's pass that prunes unused names costs half of a large schema's compile time and saves no check.
    code: { optimize: false, ...code },
  };
  const ajv =
    dialect === "draft-07" ? new Ajv(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv2020(options);
  addFormats.default(ajv);
  return ajv;
}

/** Drops a compiled schema from the Ajv instance that holds it. */
export function removeSchema(ajv: AjvInstance, schema: unknown): void {
  if (typeof schema !== "object" || schema === null) return;
  try {
    ajv.removeSchema(schema as SchemaNode);
  } catch {
    // Nothing was registered for it.
  }
}
