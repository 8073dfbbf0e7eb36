import { GatewayError } from "../errors/gateway-error.js";
import { maxSchemaCharsOf, type PolicyVersion } from "../policy/policy.js";
import { compactJsonCodePoints } from "../window/code-points.js";
import { compiledValidator } from "./compile-validator.js";
import { inPlaceCycle } from "./ref-cycles.js";
import { refusalError } from "./schema-refusals.js";

/** Where a call's full schema came from: the client's request, or the gateway's named schemas. */
export type SchemaOrigin = "client" | "named";

/**
 * Checks a call's full response schema before anything is sent: a client's schema against the policy's
 * size cap (compiling, projecting and faking cost grow with it), then that no `$ref` cycle stays on one
 * value, then, where the policy validates answers, that it compiles. Throws 400 INVALID_REQUEST.
 */
export function admitResponseSchema(schema: unknown, policy: PolicyVersion, origin: SchemaOrigin): void {
  if (!admissibleSize(schema, policy, origin)) {
    throw new GatewayError(
      "INVALID_REQUEST",
      400,
      `The response schema has ${compactJsonCodePoints(schema)} characters as compact JSON; policy ${policy.ref} ` +
        `allows at most ${maxSchemaCharsOf(policy.policy)} (validation.max_schema_chars). Nothing was sent.`,
      { param: "response_schema" },
    );
  }
  // Compiling checks the cycles too, and remembers the outcome with the validator.
  if (policy.policy.validation.enabled) compiledValidator(schema);
  else if (cycles(schema)) throw refusalError("cycle");
}

/** Whether a schema is within the policy's size cap; a named schema always is (the operator chose it). */
export function admissibleSize(schema: unknown, policy: PolicyVersion, origin: SchemaOrigin): boolean {
  return origin === "named" || compactJsonCodePoints(schema) <= maxSchemaCharsOf(policy.policy);
}

function cycles(schema: unknown): boolean {
  try {
    return inPlaceCycle(schema) !== undefined;
  } catch (error) {
    if (error instanceof RangeError) throw refusalError("too-complex");
    throw error;
  }
}
