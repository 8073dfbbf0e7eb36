import { Ajv, type CodeOptions, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { LRUCache } from "lru-cache";
import { invalidRequest } from "../errors/gateway-error.js";
import { canonicalJson } from "../json/canonical-json.js";
import { compactJson } from "../json/compact-json.js";
import { withDiscriminators } from "./diagnose-discriminators.js";
import { inlineLocalRefs } from "./diagnose-inline-refs.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";

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

/** A validator compiled ahead of time (Ajv standalone code) for a schema known at build time. */
export interface PrecompiledValidator {
  /** Canonical JSON of the schema as a request sends or names it (before `prepare`). */
  readonly key: string;
  readonly validator: CompiledValidator;
}

interface CompiledEntry {
  readonly validator: CompiledValidator;
  /** Drops the compiled schema from the Ajv instance that holds it. */
  readonly release: () => void;
}

/** A schema that failed to compile is remembered too, so a client repeating it costs no second compile. */
type CacheEntry = CompiledEntry | { readonly invalid: true };

const invalidSchemaMessage =
  "The response schema cannot be used: it is not a valid JSON Schema or it refers to another document.";

const notPrecompiledMessage =
  "This deployment validates only the named schemas compiled into it; send one of them, or name it with x-promptgate-schema.";

/**
 * Validators by the schema's compact JSON, which is built once per schema object (to measure
 * it) and so costs nothing here, while the canonical key sorts every object first. A schema
 * each request parses anew in the same spelling is found here. Cleared whenever the
 * precompiled set changes.
 */
const byText = new LRUCache<string, CompiledValidator>({ max: 256 });

/** Validators compiled ahead of time, by key; consulted before the cache. */
const precompiled = new Map<string, CompiledValidator>();

/** False where code generation is forbidden during a request (Cloudflare Workers): only precompiled schemas work. */
let compileOthers = true;

const cache = new LRUCache<string, CacheEntry>({
  max: 256,
  dispose: (entry) => {
    if ("release" in entry) entry.release();
  },
});

/**
 * Ajv instances shared by every schema without identifiers, one per dialect and discriminator
 * setting: a new instance costs ~20 ms (meta-schemas), a compile in a warm one ~1 ms.
 */
const sharedInstances = new Map<string, AjvInstance>();

/**
 * The compiled validator of a full response schema, from bounded caches keyed by the schema's
 * compact, then its canonical JSON. Throws a 400 `INVALID_REQUEST` (fixed text, no schema content) for a schema
 * that cannot compile, e.g. an invalid one or one with an external `$ref`.
 */
export function compiledValidator(schema: unknown): CompiledValidator {
  // The compact JSON is remembered per schema object, so asking again for one (before sending, then for the
  // answer; a named schema on every call) costs a map lookup.
  const text = compactJson(schema);
  let validator = byText.get(text);
  if (validator === undefined) {
    validator = validatorFor(schema);
    byText.set(text, validator);
  }
  return validator;
}

function validatorFor(schema: unknown): CompiledValidator {
  const key = canonicalJson(schema);
  const ahead = precompiled.get(key);
  if (ahead !== undefined) return ahead;
  if (!compileOthers) throw invalidRequest(notPrecompiledMessage, "response_schema");
  let entry = cache.get(key);
  if (entry === undefined) {
    entry = compileEntry(schema, key);
    cache.set(key, entry);
  }
  if ("invalid" in entry) throw invalidRequest(invalidSchemaMessage, "response_schema");
  return entry.validator;
}

/**
 * Makes `compiledValidator` answer these schemas from precompiled code (replacing any set before). With
 * `compileOthers: false`, every other schema gets a 400 INVALID_REQUEST instead of being compiled.
 */
export function usePrecompiledValidators(
  validators: readonly PrecompiledValidator[],
  options: { compileOthers: boolean },
): void {
  precompiled.clear();
  byText.clear();
  for (const { key, validator } of validators) precompiled.set(key, validator);
  compileOthers = options.compileOthers;
}

/**
 * Compiles a schema exactly as `compiledValidator` does, in the Ajv instances `ajvFor` gives; undefined when it
 * cannot. Build-time code passes instances made with `code.source` to write the validator out as standalone code.
 */
export function compileSchema(
  schema: unknown,
  ajvFor: (dialect: SchemaDialect, discriminator: boolean) => AjvInstance,
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

function preparedSchema(schema: SchemaNode | boolean): { dialect: SchemaDialect; prepared: SchemaNode | boolean } {
  if (typeof schema === "boolean") return { dialect: "2020-12", prepared: schema };
  return { dialect: dialectOf(schema.$schema), prepared: prepare(schema) };
}

function compileEntry(schema: unknown, key: string): CacheEntry {
  // A schema with identifiers gets an Ajv of its own: two clients' schemas may share an `$id`.
  const ownInstance = key.includes('"$id"');
  const compiled = compileSchema(schema, ownInstance ? createAjv : sharedAjv);
  if (compiled === undefined) return { invalid: true };
  const { validator, ajv } = compiled;
  return { validator, release: () => removeSchema(ajv, validator.schema as SchemaNode | boolean) };
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

function sharedAjv(dialect: SchemaDialect, discriminator: boolean): AjvInstance {
  const key = `${dialect}:${discriminator}`;
  let ajv = sharedInstances.get(key);
  if (ajv === undefined) {
    ajv = createAjv(dialect, discriminator);
    sharedInstances.set(key, ajv);
  }
  return ajv;
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
    ...(code && { code }),
  };
  const ajv =
    dialect === "draft-07" ? new Ajv(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv2020(options);
  addFormats.default(ajv);
  return ajv;
}

function removeSchema(ajv: AjvInstance, schema: SchemaNode | boolean): void {
  if (typeof schema === "boolean") return;
  try {
    ajv.removeSchema(schema);
  } catch {
    // Nothing was registered for it.
  }
}
