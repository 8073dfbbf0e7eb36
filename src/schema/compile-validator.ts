import type { CompiledValidator, PrecompiledValidator } from "./compile-schema.js";
import { createSchemaValidators, type SchemaValidators } from "./schema-validators.js";

export {
  type AjvInstance,
  type CompiledValidator,
  compileSchema,
  createAjv,
  type PrecompiledValidator,
  precompiledValidator,
  type SchemaDialect,
} from "./compile-schema.js";

/**
 * The validators every step of a call uses. A runtime builds its own (Node with a worker-thread compiler, Workers
 * with its precompiled schemas only) and installs it at start-up. It is held here rather than passed in `deps`
 * because the steps that validate (the answer's relay, the stream's end) do not receive `deps`.
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

/**
 * Installs validators that answer these schemas from precompiled code. With `compileOthers: false`, every
 * other schema gets a 400 INVALID_REQUEST instead of being compiled.
 */
export function usePrecompiledValidators(
  validators: readonly PrecompiledValidator[],
  options: { compileOthers: boolean },
): void {
  useSchemaValidators(createSchemaValidators({ precompiled: validators, compileOthers: options.compileOthers }));
}
