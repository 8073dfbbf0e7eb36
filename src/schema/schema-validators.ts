import { LRUCache } from "lru-cache";
import { canonicalJson } from "../json/canonical-json.js";
import { compactJson } from "../json/compact-json.js";
import type { CompiledValidator, PrecompiledValidator, SchemaCompiling } from "./compiled-validator.js";
import { interpretedSchemaCompiling } from "./interpret-schema.js";
import { refusalError, type SchemaRefusal } from "./schema-refusals.js";

/** Compiles a response schema away from the thread that serves requests (on Node, in a worker thread). */
export interface SchemaCompiler {
  /** The validator `compileResponseSchema` would give, or why the schema is refused; rejects only when it broke. */
  compile(schema: unknown): Promise<CompiledValidator | { refusal: SchemaRefusal }>;
}

export interface SchemaValidatorOptions {
  /** The most bytes, by estimate, the cached validators may hold; the least recently used go first. */
  maxBytes?: number;
  /** Validators compiled at build time, consulted first. */
  precompiled?: readonly PrecompiledValidator[];
  /**
   * How a schema is compiled in place: Ajv's code generation on Node (ajvSchemaCompiling), interpretation where code
   * cannot be generated during a request (Workers; the default, as it runs everywhere).
   */
  compiling?: SchemaCompiling;
  /** What `prepare` compiles with; without one, a schema compiles where `validatorFor` first asks for it. */
  compiler?: SchemaCompiler;
}

/** The compiled validators of one gateway, in caches bounded by an estimate of their size. */
export interface SchemaValidators {
  /**
   * The validator of a full response schema, compiled here on a miss. Throws a 400 INVALID_REQUEST
   * (fixed text) for a schema the gateway cannot take; a refused schema is remembered like a compiled one.
   */
  validatorFor(schema: unknown): CompiledValidator;
  /** Compiles a schema with the runtime's compiler, so that `validatorFor` then finds it; never rejects. */
  prepare(schema: unknown): Promise<void>;
  /** The bytes the cached validators hold, by the estimate the bound uses. */
  heldBytes(): number;
}

type Entry =
  | { validator: CompiledValidator; bytes: number; release?: () => void }
  | { refusal: SchemaRefusal; bytes: number };

/** The default bound of the validator caches: a dozen schemas at the default size cap, hundreds of usual ones. */
export const defaultValidatorBytes = 128 * 2 ** 20;

export function createSchemaValidators(options: SchemaValidatorOptions = {}): SchemaValidators {
  const { maxBytes = defaultValidatorBytes, compiling = interpretedSchemaCompiling(), compiler } = options;
  const precompiled = new Map(options.precompiled?.map(({ key, validator }) => [key, validator]));
  const entries = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
    dispose: (entry) => {
      if ("release" in entry) entry.release?.();
    },
  });
  // Canonical keys by compact JSON, which is built once per schema object anyway (to measure it), while the
  // canonical key sorts every object first: a schema each request parses anew in one spelling is found here.
  const keys = new LRUCache<string, string>({
    maxSize: Math.max(1, Math.floor(maxBytes / 4)),
    sizeCalculation: (key, text) => Math.max(1, text.length + key.length),
  });
  const pending = new Map<string, Promise<void>>();

  const keyOf = (schema: unknown): string => {
    const text = compactJson(schema);
    let key = keys.get(text);
    if (key === undefined) {
      key = canonicalJson(schema);
      keys.set(text, key);
    }
    return key;
  };
  const store = (key: string, entry: Entry): void => {
    entries.set(key, entry);
    // One larger than the whole bound is used once and not kept; what holds it (Ajv) must not keep it either.
    if (!entries.has(key) && "release" in entry) entry.release?.();
  };
  const compileHere = (schema: unknown, key: string): Entry => {
    const outcome = compiling.compile(schema, key);
    if ("refusal" in outcome) return { refusal: outcome.refusal, bytes: key.length };
    const { validator, release } = outcome;
    return { validator, bytes: key.length * compiling.bytesPerSchemaChar, ...(release && { release }) };
  };

  return {
    validatorFor(schema) {
      const key = keyOf(schema);
      const ahead = precompiled.get(key);
      if (ahead !== undefined) return ahead;
      let entry = entries.get(key);
      if (entry === undefined) {
        entry = compileHere(schema, key);
        store(key, entry);
      }
      if ("refusal" in entry) throw refusalError(entry.refusal);
      return entry.validator;
    },
    async prepare(schema) {
      if (compiler === undefined) return;
      const key = keyOf(schema);
      if (precompiled.has(key) || entries.has(key)) return;
      let compiled = pending.get(key);
      if (compiled === undefined) {
        compiled = compiler.compile(schema).then(
          (outcome) =>
            store(
              key,
              "refusal" in outcome
                ? { refusal: outcome.refusal, bytes: key.length }
                : { validator: outcome, bytes: key.length * compiling.bytesPerSchemaChar },
            ),
          // A compiler that broke leaves the schema to `validatorFor`, which compiles it in place.
          () => undefined,
        );
        pending.set(key, compiled);
        void compiled.finally(() => pending.delete(key));
      }
      await compiled;
    },
    heldBytes: () => entries.calculatedSize,
  };
}
