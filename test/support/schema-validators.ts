import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import type { CompiledValidator } from "../../src/schema/compiled-validator.js";
import { createSchemaValidators, type SchemaValidators } from "../../src/schema/schema-validators.js";

/** Whether the tests run inside workerd (vitest.workers.config.ts), not on Node. */
const inWorkerd = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === "Cloudflare-Workers";

/**
 * The validators the tests validate with, as the runtime they run on does: on Node with Ajv compiling (as
 * node-gateway.ts builds them, without its worker thread), inside workerd with the default, interpretive validators
 * (as Workers validate a client's schema). The schema tests shared by both suites thus hold both validators to the
 * same outcome.
 */
export const testSchemaValidators: SchemaValidators = createSchemaValidators(
  inWorkerd ? {} : { compiling: ajvSchemaCompiling() },
);

/** The validator of a full response schema, from `testSchemaValidators`; throws as `validatorFor` does. */
export function validatorOf(schema: unknown): CompiledValidator {
  return testSchemaValidators.validatorFor(schema);
}
