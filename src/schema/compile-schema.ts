import { Ajv, type CodeOptions, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { budgetedReferences } from "./ajv-budget.js";
import type { AjvInstance } from "./ajv-instance.js";
import { ajvValidate } from "./ajv-validate.js";
import { type CompiledValidator, guardedCompile, type SchemaCompiling } from "./compiled-validator.js";
import { type PreparedSchema, preparedSchema, type SchemaDialect } from "./prepare-schema.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import type { SchemaRefusal } from "./schema-refusals.js";

// Ajv's code generation: Node and the build scripts only. Workers cannot generate code during a request and do not
// bundle this module (see interpret-schema.ts for what they validate client schemas with).

/** Gives the Ajv instance a schema of a dialect is compiled in, with or without Ajv's discriminator option. */
export type AjvFor = (dialect: SchemaDialect, discriminator: boolean) => AjvInstance;

/** A schema Ajv compiled: its validate function, the instance that holds it, and the schema as compiled. */
export interface AjvCompiled {
  readonly validate: ValidateFunction;
  readonly ajv: AjvInstance;
  readonly schema: SchemaNode | boolean;
  readonly dialect: SchemaDialect;
}

/** Bytes a validator compiled by Ajv holds per code point of its schema (see defaultValidatorBytes). */
export const ajvBytesPerSchemaChar = 64;

/** Compiles a full response schema with Ajv, refused as `guardedCompile` says or when Ajv cannot compile it. */
export function compileResponseSchema(schema: unknown, ajvFor: AjvFor): AjvCompiled | { refusal: SchemaRefusal } {
  return guardedCompile(schema, (prepared) => compilePrepared(prepared, ajvFor) ?? { refusal: "invalid" });
}

/**
 * Compiles a schema exactly as `compileResponseSchema` does, in the Ajv instances `ajvFor` gives; undefined when it
 * cannot. Build-time code passes instances made with `code.source` to write the validator out as standalone code.
 */
export function compileSchema(schema: unknown, ajvFor: AjvFor): AjvCompiled | undefined {
  if (typeof schema !== "boolean" && !isSchemaNode(schema)) return undefined;
  return compilePrepared(preparedSchema(schema), ajvFor);
}

function compilePrepared({ dialect, prepared }: PreparedSchema, ajvFor: AjvFor): AjvCompiled | undefined {
  // Ajv validates only the alternative a `discriminator` names; an unusable one (e.g. with `mapping`) is ignored.
  const discriminatorSettings = JSON.stringify(prepared).includes('"discriminator"') ? [true, false] : [false];
  for (const discriminator of discriminatorSettings) {
    const ajv = ajvFor(dialect, discriminator);
    try {
      return { validate: ajv.compile(prepared), ajv, schema: prepared, dialect };
    } catch {
      removeSchema(ajv, prepared);
    }
  }
  return undefined;
}

/** The neutral validator of a schema Ajv compiled. */
export function ajvCompiledValidator({ validate, schema, dialect }: AjvCompiled): CompiledValidator {
  return { validate: ajvValidate(validate), schema, dialect };
}

/**
 * Compiling with Ajv as Node does on the serving thread: schemas without identifiers share one Ajv instance per
 * dialect (a new instance costs ~20 ms for its meta-schemas, a compile ~1 ms); one with an `$id` gets its own, as two
 * clients' schemas may share an `$id`. A validator let go of leaves its instance.
 */
export function ajvSchemaCompiling(): SchemaCompiling {
  const instances = new Map<string, AjvInstance>();
  const sharedAjv: AjvFor = (dialect, discriminator) => {
    const name = `${dialect}:${discriminator}`;
    const ajv = instances.get(name) ?? createAjv(dialect, discriminator);
    instances.set(name, ajv);
    return ajv;
  };
  return {
    compile(schema, key) {
      const outcome = compileResponseSchema(schema, key.includes('"$id"') ? createAjv : sharedAjv);
      if ("refusal" in outcome) return outcome;
      return { validator: ajvCompiledValidator(outcome), release: () => removeSchema(outcome.ajv, outcome.schema) };
    },
    bytesPerSchemaChar: ajvBytesPerSchemaChar,
  };
}

/** The Ajv instance schemas are compiled in; `code` e.g. `{ source: true, esm: true }` for standalone code. */
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
    // The work budget of one validation is `this` of Ajv's code (see budgetedReferences).
    passContext: true,
  };
  const ajv =
    dialect === "draft-07" ? new Ajv(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv2020(options);
  // The formats only: ajv-formats' formatMinimum and kin are no JSON Schema keywords, and are ignored as vendor
  // keywords are, on Node as by the interpretive validator on Workers.
  addFormats.default(ajv, { keywords: false });
  budgetedReferences(ajv);
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
