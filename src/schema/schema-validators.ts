import { LRUCache } from "lru-cache";
import { canonicalJson } from "../json/canonical-json.js";
import { compactJson } from "../json/compact-json.js";
import {
  type AjvInstance,
  type CompiledValidator,
  compileResponseSchema,
  createAjv,
  type PrecompiledValidator,
  removeSchema,
} from "./compile-schema.js";
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
  /** False where code cannot be generated during a request (Workers): other schemas get a 400. */
  compileOthers?: boolean;
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

/**
 * Bytes a compiled validator holds per code point of its schema. Measured: ~20 on the V8 heap and 60–200 of
 * RSS (generated code, Ajv's records of the schema); 300 distinct 130k schemas once grew RSS by 2.4 GB.
 */
export const bytesPerSchemaChar = 64;

/** The default bound of the validator caches: a dozen schemas at the default size cap, hundreds of usual ones. */
export const defaultValidatorBytes = 128 * 2 ** 20;

export function createSchemaValidators(options: SchemaValidatorOptions = {}): SchemaValidators {
  const { maxBytes = defaultValidatorBytes, compileOthers = true, compiler } = options;
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
  const compiling = new Map<string, Promise<void>>();
  // Ajv instances shared by schemas without identifiers: a new instance costs ~20 ms (meta-schemas), a compile ~1 ms.
  const ajvInstances = new Map<string, AjvInstance>();
  const sharedAjv = (dialect: Parameters<typeof createAjv>[0], discriminator: boolean) => {
    const name = `${dialect}:${discriminator}`;
    const ajv = ajvInstances.get(name) ?? createAjv(dialect, discriminator);
    ajvInstances.set(name, ajv);
    return ajv;
  };

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
    // One larger than the whole bound is used once and not kept; Ajv must not keep it either.
    if (!entries.has(key) && "release" in entry) entry.release?.();
  };
  const compileHere = (schema: unknown, key: string): Entry => {
    // A schema with identifiers gets an Ajv of its own: two clients' schemas may share an `$id`.
    const outcome = compileResponseSchema(schema, key.includes('"$id"') ? createAjv : sharedAjv);
    if ("refusal" in outcome) return { refusal: outcome.refusal, bytes: key.length };
    const { validator, ajv } = outcome;
    return { validator, bytes: key.length * bytesPerSchemaChar, release: () => removeSchema(ajv, validator.schema) };
  };

  return {
    validatorFor(schema) {
      const key = keyOf(schema);
      const ahead = precompiled.get(key);
      if (ahead !== undefined) return ahead;
      let entry = entries.get(key);
      if (entry === undefined) {
        if (!compileOthers) throw refusalError("not-precompiled");
        entry = compileHere(schema, key);
        store(key, entry);
      }
      if ("refusal" in entry) throw refusalError(entry.refusal);
      return entry.validator;
    },
    async prepare(schema) {
      if (compiler === undefined || !compileOthers) return;
      const key = keyOf(schema);
      if (precompiled.has(key) || entries.has(key)) return;
      let pending = compiling.get(key);
      if (pending === undefined) {
        pending = compiler.compile(schema).then(
          (compiled) =>
            store(
              key,
              "refusal" in compiled
                ? { refusal: compiled.refusal, bytes: key.length }
                : { validator: compiled, bytes: key.length * bytesPerSchemaChar },
            ),
          // A compiler that broke leaves the schema to `validatorFor`, which compiles it in place.
          () => undefined,
        );
        compiling.set(key, pending);
        void pending.finally(() => compiling.delete(key));
      }
      await pending;
    },
    heldBytes: () => entries.calculatedSize,
  };
}
