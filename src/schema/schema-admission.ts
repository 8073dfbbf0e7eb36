import { GatewayError } from "../errors/gateway-error.js";
import { canonicalJson } from "../json/canonical-json.js";
import { maxSchemaCharsOf, type PolicyVersion } from "../policy/policy.js";
import { compactJsonCodePoints } from "../window/code-points.js";
import type { CompiledValidator } from "./compiled-validator.js";
import { inPlaceCycle } from "./ref-cycles.js";
import { refusalError } from "./schema-refusals.js";
import type { SchemaValidators } from "./schema-validators.js";

/** Where a call's full schema came from: the client's request, or the gateway's named schemas. */
export type SchemaOrigin = "client" | "named";

/**
 * Checks a call's full response schema before anything is sent: a client's schema against the policy's
 * size cap (compiling, projecting and faking cost grow with it), then that no `$ref` cycle stays on one
 * value, then, where the policy validates answers, that it compiles with `validators`. Throws 400
 * INVALID_REQUEST. Returns the schema's validator where the policy validates answers, else undefined.
 */
export function admitResponseSchema(
  validators: SchemaValidators,
  schema: unknown,
  policy: PolicyVersion,
  origin: SchemaOrigin,
): CompiledValidator | undefined {
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
  if (policy.policy.validation.enabled) return validators.validatorFor(schema);
  if (cycles(schema)) throw refusalError("cycle");
  return undefined;
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

/** The canonical JSON of each named schema, by name, made once per set of named schemas. */
const canonicalNamed = new WeakMap<ReadonlyMap<string, unknown>, Map<string, string>>();

function canonicalOf(schemas: ReadonlyMap<string, unknown>, name: string): string | undefined {
  let texts = canonicalNamed.get(schemas);
  if (texts === undefined) {
    texts = new Map([...schemas].map(([known, schema]) => [known, canonicalJson(schema)]));
    canonicalNamed.set(schemas, texts);
  }
  return texts.get(name);
}

/**
 * Checks a call's full response schema against the policy's list of accepted named schemas
 * (`[validation] schemas`), by content: a call whose schema is none of them is 400 INVALID_REQUEST before
 * anything is sent. A call without a schema, or under a policy without a list, passes. Returns the listed name the
 * schema is, where there is a list.
 */
export function admitListedSchema(
  schema: unknown,
  policy: PolicyVersion,
  schemas: ReadonlyMap<string, unknown>,
): string | undefined {
  const listed = policy.policy.validation.schemas;
  if (listed === undefined || schema === undefined) return undefined;
  const text = canonicalJson(schema);
  const match = listed.find((name) => canonicalOf(schemas, name) === text);
  if (match !== undefined) return match;
  const missing = listed.filter((name) => !schemas.has(name));
  throw new GatewayError(
    "INVALID_REQUEST",
    400,
    `Policy ${policy.ref} accepts only the response schemas ${listed.join(", ")} (validation.schemas); ` +
      "this call's schema is none of them. Send one of them as it is, or name it with x-promptgate-schema. " +
      (missing.length > 0 ? `(${missing.join(", ")} is not among the gateway's named schemas.) ` : "") +
      "Nothing was sent.",
    { param: "response_schema" },
  );
}
