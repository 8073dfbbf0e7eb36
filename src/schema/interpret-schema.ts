import { validate } from "@cfworker/json-schema";
import { ajvUsesDiscriminators } from "./ajv-discriminator.js";
import { type CompileOutcome, guardedCompile, type SchemaCompiling } from "./compiled-validator.js";
import { ajvWouldCompile, resolveIn } from "./interpreted-admission.js";
import { type BudgetedPass, budgetedPasses } from "./interpreted-budget.js";
import { type InterpretedSchema, interpretedCopy } from "./interpreted-copy.js";
import { neutralErrors } from "./interpreted-errors.js";
import { alignFormats } from "./interpreted-formats.js";
import { type MetaSchema, metaSchema, metaValid } from "./meta-schemas.js";
import type { SchemaDialect } from "./prepare-schema.js";
import { cutShort } from "./validation-budget.js";
import type { ValidatorError } from "./validator-error.js";

// Validation without code generation, for Workers (which forbid it during a request) and wherever else it is asked
// for: @cfworker/json-schema walks the schema for each answer. It takes the schema as prepared for Ajv, refuses what
// Ajv refuses, validates as Ajv does (see interpretedCopy) and reports its errors in Ajv's form (neutralErrors), so
// that an answer gets the same diagnostics on both runtimes.

/**
 * Bytes an interpreted validator holds per code point of its schema: the prepared schema, the copy the validator
 * reads and its lookup of nodes. Measured on Node 20: 6–7 on the V8 heap and 14–24 of RSS, for copies of the
 * investigation schema and of a 100,000-character one (Ajv: 15–17 and 21–46 there, without its code cache).
 */
export const interpretedBytesPerSchemaChar = 24;

/**
 * The deepest answer the interpretive validator checks: it recurses with larger frames than Ajv's code and, against
 * a recursive schema, reaches the end of the stack after ~270 levels on Node 20 and in workerd, sooner or later as
 * the engine's optimisation goes. A fixed bound below that gives every run the same outcome.
 */
export const interpretedMaxDepth = 256;

/** At most this many of the validator's errors are made Ajv's (each costs a pass over the others). */
const maxCollectedUnits = 250;

/** Compiling by interpretation: the meta-schemas of the three dialects are read once, on first use. */
export function interpretedSchemaCompiling(): SchemaCompiling {
  alignFormats();
  const metaSchemas = new Map<SchemaDialect, MetaSchema>();
  const metaOf = (dialect: SchemaDialect): MetaSchema => {
    const meta = metaSchemas.get(dialect) ?? metaSchema(dialect);
    metaSchemas.set(dialect, meta);
    return meta;
  };
  return {
    compile: (schema) => interpretResponseSchema(schema, metaOf),
    bytesPerSchemaChar: interpretedBytesPerSchemaChar,
  };
}

/** A full response schema as an interpreted validator, refused where Ajv would refuse it. */
export function interpretResponseSchema(
  schema: unknown,
  metaOf: (dialect: SchemaDialect) => MetaSchema,
): CompileOutcome {
  return guardedCompile(schema, ({ dialect, prepared }): CompileOutcome => {
    if (!metaValid(metaOf(dialect), prepared)) return { refusal: "invalid" };
    let copy: InterpretedSchema;
    try {
      copy = interpretedCopy(prepared, dialect);
    } catch (error) {
      // A duplicate or malformed identifier; an exhausted stack is guardedCompile's.
      if (error instanceof RangeError) throw error;
      return { refusal: "invalid" };
    }
    if (!ajvWouldCompile(copy)) return { refusal: "invalid" };
    const discriminators = ajvUsesDiscriminators(copy.root, resolveIn(copy));
    return {
      validator: {
        validate: interpretedValidate(copy, discriminators),
        schema: prepared,
        dialect,
        maxDepth: interpretedMaxDepth,
      },
    };
  });
}

function interpretedValidate(copy: InterpretedSchema, discriminators: boolean) {
  const budgeted = budgetedPasses(copy);
  return function validateInterpreted(answer: unknown): readonly ValidatorError[] {
    try {
      return errorsOf(copy, answer, discriminators, budgeted);
    } catch (error) {
      // The validator builds its locations with encodeURI, which throws on a name with a lone surrogate.
      if (!(error instanceof URIError)) throw error;
      return errorsOf(copy, wellFormedNames(answer), discriminators, budgeted);
    }
  };
}

function errorsOf(
  copy: InterpretedSchema,
  answer: unknown,
  discriminators: boolean,
  budgeted: BudgetedPass,
): readonly ValidatorError[] {
  // Most answers are valid: the first pass stops at the first failure, the second collects them all.
  if (budgeted(answer, (lookup) => validate(answer, copy.root, "2020-12", lookup, true).valid)) return [];
  const { errors } = budgeted(answer, (lookup) => validate(answer, copy.root, "2020-12", lookup, false));
  if (errors.length <= maxCollectedUnits) return neutralErrors(errors, copy, answer, discriminators);
  // The validator lists an applicator before the failures inside it: the first ones are a consistent part.
  return [...neutralErrors(errors.slice(0, maxCollectedUnits), copy, answer, discriminators), cutShort];
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormedNames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(wellFormedNames);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [name.replace(loneSurrogate, "\uFFFD"), wellFormedNames(member)]),
  );
}
