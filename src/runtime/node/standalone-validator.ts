import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { Script } from "node:vm";
import type { ValidateFunction } from "ajv";

/**
 * Ajv standalone code (CommonJS) turned into a validate function on this thread. With the V8 code
 * cache the compiling thread made after running the code once, this skips parsing and compiling the
 * code again: ~20 ms instead of ~350 ms for the 1.6 MB a 100,000-character schema compiles to.
 */

const load = createRequire(import.meta.url);

// V8 keeps every script it compiles in a per-isolate cache keyed by its source, for as long as the isolate
// lives: each distinct schema's validator code (~2.4 MiB for an 80,000-character schema) would stay there
// after the validator cache dropped it, and memory would grow with every new schema. The gateway never
// compiles one source twice (the validator cache does that job), so the cache is turned off, for the process.
setFlagsFromString("--no-compilation-cache");

/** The only modules Ajv's standalone code asks for: its runtime helpers and the formats of ajv-formats. */
const allowed = /^(ajv\/dist\/runtime\/[a-z0-9_]+|ajv-formats\/dist\/formats)$/;

function requireAllowed(specifier: string): unknown {
  if (!allowed.test(specifier)) throw new Error("Standalone validator code asked for a module it may not use.");
  return load(specifier);
}

/** Wraps standalone code as a function of CommonJS's `require`, `module` and `exports`. */
export function wrappedSource(source: string): string {
  return `(function (require, module, exports) {\n${source}\n})`;
}

/**
 * The validate function of wrapped standalone code; `cachedData` is V8's code cache of that source
 * (rejected and ignored when another V8 made it). Also gives the script, to make a cache from.
 */
export function instantiateValidator(
  wrapped: string,
  cachedData?: Uint8Array,
): { validate: ValidateFunction; script: Script } {
  const script = new Script(wrapped, {
    filename: "promptgate-response-schema.js",
    ...(cachedData === undefined
      ? {}
      : { cachedData: Buffer.from(cachedData.buffer, cachedData.byteOffset, cachedData.byteLength) }),
  });
  const factory = script.runInThisContext() as (require: unknown, module: unknown, exports: unknown) => void;
  const module: { exports: { default?: ValidateFunction } & Partial<ValidateFunction> } = { exports: {} };
  factory(requireAllowed, module, module.exports);
  const validate = module.exports.default ?? (module.exports as ValidateFunction);
  if (typeof validate !== "function") throw new Error("Standalone validator code exported no function.");
  return { validate, script };
}
