import type { CompiledValidator } from "./compiled-validator.js";
import { createSchemaValidators, type SchemaValidators } from "./schema-validators.js";

export type { CompiledValidator, PrecompiledValidator, SchemaDialect } from "./compiled-validator.js";
export { precompiledValidator } from "./compiled-validator.js";

/**
 * The validators every step of a call uses. A runtime builds its own (Node compiling with Ajv, in a worker thread;
 * Workers interpreting, with its named schemas precompiled) and installs it at start-up; until then they interpret,
 * which runs everywhere. It is held here rather than passed in `deps` because the steps that validate (the answer's
 * relay, the stream's end) do not receive `deps`.
 */
let active: SchemaValidators = createSchemaValidators();

/** Makes `validators` the ones `compiledValidator` and `prepareSchema` use. */
export function useSchemaValidators(validators: SchemaValidators): void {
  active = validators;
}

/**
 * The compiled validator of a full response schema, from caches bounded by size. Throws a 400
 * `INVALID_REQUEST` (fixed text, no schema content) for a schema the gateway cannot take, e.g. an
 * invalid one, one with an external `$ref`, or one whose `$ref`s loop without moving into the answer.
 */
export function compiledValidator(schema: unknown): CompiledValidator {
  return active.validatorFor(schema);
}

/** Compiles a schema off the request thread where the runtime can, so that `compiledValidator` finds it. */
export function prepareSchema(schema: unknown): Promise<void> {
  return active.prepare(schema);
}
