import { GatewayError } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import { maxNestingDepth, parseJsonBody } from "../http/read-body.js";
import { canonicalJson } from "../json/canonical-json.js";
import type { JsonObject } from "../json/json-object.js";
import type { JsonScanner } from "../json/json-scanner.js";
import { lazyObject } from "../json/lazy-object.js";
import type { Tape } from "../json/tape.js";
import type { LogicalCall } from "../logical-call.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { ProviderTarget } from "../routing/route-call.js";
import { withoutQuery } from "../routing/translate-call.js";
import type { CompiledValidator } from "../schema/compiled-validator.js";
import { admissibleSize, admitResponseSchema } from "../schema/schema-admission.js";
import type { SchemaValidators } from "../schema/schema-validators.js";
import type { MeasuredEndpoint } from "../surfaces/surface.js";
import { enforceWindow } from "../window/check.js";
import { type CachedPrefix, countCall, measure } from "../window/prompt-size.js";

/** The prompt_size of each check that ran, a rejected call's too. */
export interface Measurements {
  preflight?: PromptSize;
  /** Undefined for count routes, which are never checked. */
  provider?: PromptSize;
}

/** A call ready to send: measured, checked twice, with the exact body the provider receives. */
export interface PreparedCall {
  call: LogicalCall;
  /** The exact bytes sent upstream: the client's own unless a policy transform applied. */
  body: Uint8Array<ArrayBuffer>;
  /** The full JSON Schema answers are validated against, if any. */
  fullSchema: unknown;
  /** The full schema's validator, compiled when the call was admitted; undefined unless the policy validates answers. */
  validator: CompiledValidator | undefined;
  /** What a schema projection left out, by path. */
  omitted: string[];
}

/** What the checks of a call measured, and the call ready to send or what refused it. */
export type CheckedCall =
  | { measurements: Measurements; prepared: PreparedCall; error?: undefined }
  | { measurements: Measurements; prepared?: undefined; error: unknown };

/** A client's request, read: its wire body and its logical call. */
export interface ParsedCall {
  bytes: Uint8Array<ArrayBuffer>;
  /** The parsed body; a body measured from its bytes is parsed only when this is first read. */
  readonly body: JsonObject;
  call: LogicalCall;
}

/** How the call record names the digits that number literals carry beyond their values. */
export const numberLiterals = "(number literals)";

/**
 * Reads a client's body into its logical call, or INVALID_REQUEST; under a policy that refuses
 * fields its surface does not know, a call that carries one (except on a count route, which is
 * never refused) is INVALID_REQUEST naming its path. A body the scanner is sure of is measured
 * from its bytes, and parsed only if a later step reads it; any other is parsed, and the parser's
 * verdict stands. `scanner` is the runtime's (see `Deps.jsonScanner`).
 */
export function parseCall(
  endpoint: MeasuredEndpoint,
  bytes: Uint8Array<ArrayBuffer>,
  path: string,
  policy: PolicyVersion,
  scanner: JsonScanner,
): ParsedCall {
  const tape = endpoint.readTape === undefined ? undefined : scanner.scan(bytes, maxNestingDepth);
  let body: JsonObject | undefined;
  let call: LogicalCall;
  let numberExcess: number;
  if (tape !== undefined && endpoint.readTape !== undefined) {
    call = endpoint.readTape(tape, path);
    numberExcess = tape.numberExcess;
  } else {
    const parsed = parseJsonBody(bytes);
    body = parsed.body;
    call = endpoint.parse(body, path);
    numberExcess = parsed.numberExcess;
  }
  // The client's bytes go upstream as written: digits its number literals carry beyond their values count too.
  if (numberExcess > 0) call.other.push({ path: numberLiterals, chars: numberExcess, unknown: false });
  if (policy.policy.window.unknown_fields === "reject" && endpoint.kind !== "count") {
    const unknown = call.other.find((field) => field.unknown);
    if (unknown !== undefined) {
      throw new GatewayError(
        "INVALID_REQUEST",
        400,
        `'${unknown.path}' is not a field this API takes as known, and policy ${policy.ref} refuses unknown fields; nothing was sent.`,
        { param: unknown.path },
      );
    }
  }
  return new ReadCall(bytes, call, body, tape);
}

/**
 * A parsed call as a class, not an object literal with a getter: V8 turned each such literal into a dictionary on
 * every call (seen with `--log-maps`), where a class keeps one hidden class for all.
 */
class ReadCall implements ParsedCall {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly call: LogicalCall;
  #body: JsonObject | undefined;
  readonly #tape: Tape | undefined;

  constructor(bytes: Uint8Array<ArrayBuffer>, call: LogicalCall, body: JsonObject | undefined, tape: Tape | undefined) {
    this.bytes = bytes;
    this.call = call;
    this.#body = body;
    this.#tape = tape;
  }

  get body(): JsonObject {
    // Set already unless the body was measured from its tape.
    this.#body ??= lazyObject(this.#tape as Tape);
    return this.#body;
  }
}

const encoder = new TextEncoder();

/**
 * Measures a parsed call and runs both checks: the preflight on the client's request (with
 * the reserve), then the provider check on the exact body that would be sent, after any
 * schema transport, cached prefix included. A check that fails refuses the call before anything
 * is sent; the sizes measured until then come with the refusal.
 * A call routed elsewhere (`target`: translated for another provider, or with the table's model
 * id) sends the target's body, measured by the target's endpoint, its schema transported there.
 * The full schema is compiled with `validators` (the runtime's, see `Deps.schemaValidators`).
 */
export function prepareCall(
  endpoint: MeasuredEndpoint,
  parsed: ParsedCall,
  path: string,
  policy: PolicyVersion,
  namedSchema: unknown,
  cachedPrefix: CachedPrefix,
  validators: SchemaValidators,
  target?: ProviderTarget,
): CheckedCall {
  const measurements: Measurements = {};
  try {
    const prepared = checkCall(
      endpoint,
      parsed,
      path,
      policy,
      namedSchema,
      cachedPrefix,
      validators,
      target,
      (size) => {
        measurements[size.check] = size;
      },
    );
    return { measurements, prepared };
  } catch (error) {
    return { measurements, error };
  }
}

/** Runs both checks, telling `measured` each size as it is known, before that check may refuse the call. */
function checkCall(
  endpoint: MeasuredEndpoint,
  parsed: ParsedCall,
  path: string,
  policy: PolicyVersion,
  namedSchema: unknown,
  cachedPrefix: CachedPrefix,
  validators: SchemaValidators,
  target: ProviderTarget | undefined,
  measured: (size: PromptSize) => void,
): PreparedCall {
  const { bytes: clientBytes, body: clientBody, call } = parsed;
  const output = endpoint.structuredOutput;
  const native = call.responseSchema !== undefined;
  const fullSchema = output === undefined ? undefined : fullSchemaOf(output.fullSchema(call, clientBody), namedSchema);
  // A named schema the client does not send natively is transported, so it counts from the start.
  const preflightCall = native || fullSchema === undefined ? call : { ...call, responseSchema: fullSchema };
  const counts = countCall(preflightCall);
  const preflight = measure(preflightCall, { check: "preflight", policy, cachedPrefix }, counts);
  measured(preflight);
  if (endpoint.kind === "count") {
    return { call, body: clientBytes, fullSchema: undefined, validator: undefined, omitted: [] };
  }
  // Creating a cached content is refused only when its content alone exceeds the limit.
  if (endpoint.kind !== "cache") enforceWindow(preflight, policy);
  const validator =
    fullSchema === undefined
      ? undefined
      : admitResponseSchema(validators, fullSchema, policy, namedSchema === undefined ? "client" : "named");
  const providerEndpoint = target?.endpoint ?? endpoint;
  const providerOutput = providerEndpoint.structuredOutput;
  const transported =
    providerOutput === undefined || fullSchema === undefined
      ? undefined
      : providerOutput.transport(target?.body ?? clientBody, fullSchema, policy.policy, native);
  const sentBody = transported?.body ?? target?.body;
  const providerCall =
    sentBody === undefined ? call : providerEndpoint.parse(sentBody, withoutQuery(target?.path ?? path));
  // An unchanged call is not counted again: only the reserve and the de-duplication differ.
  const providerCounts = providerCall === preflightCall ? counts : countCall(providerCall);
  const provider = measure(providerCall, { check: "provider", policy, cachedPrefix }, providerCounts);
  measured(provider);
  enforceWindow(provider, policy);
  return {
    call,
    body: sentBody === undefined ? clientBytes : encoder.encode(JSON.stringify(sentBody)),
    fullSchema,
    validator,
    omitted: transported?.omitted ?? [],
  };
}

/**
 * Compiles a call's full schema ahead of `prepareCall` with `validators`, off the serving thread where the runtime
 * can (Node: a worker thread), so that `prepareCall` finds it compiled instead of compiling it in place. Never
 * throws: `prepareCall` still reports what is wrong with the call, in its order.
 */
export async function compileCallSchema(
  endpoint: MeasuredEndpoint,
  parsed: ParsedCall,
  policy: PolicyVersion,
  namedSchema: unknown,
  validators: SchemaValidators,
): Promise<void> {
  const output = endpoint.structuredOutput;
  if (output === undefined || endpoint.kind === "count" || !policy.policy.validation.enabled) return;
  try {
    const fullSchema = fullSchemaOf(output.fullSchema(parsed.call, parsed.body), namedSchema);
    if (
      fullSchema !== undefined &&
      admissibleSize(fullSchema, policy, namedSchema === undefined ? "client" : "named")
    ) {
      await validators.prepare(fullSchema);
    }
  } catch {
    // Left to prepareCall.
  }
}

/**
 * The full schema of a call: the named one, the native one, or both when they are the same.
 * Two different schemas would validate the answer against one the model was not asked for.
 */
function fullSchemaOf(nativeSchema: unknown, namedSchema: unknown): unknown {
  if (namedSchema === undefined) return nativeSchema;
  if (nativeSchema !== undefined && canonicalJson(nativeSchema) !== canonicalJson(namedSchema)) {
    throw new GatewayError(
      "INVALID_REQUEST",
      400,
      "The x-promptgate-schema header names a schema other than the one the request sends natively.",
      { param: "x-promptgate-schema" },
    );
  }
  return namedSchema;
}

/** The named schema of `x-promptgate-schema`, or INVALID_REQUEST when no such schema is known. */
export function namedSchema(schemas: ReadonlyMap<string, unknown>, name: string | null): unknown {
  if (name === null) return undefined;
  const schema = schemas.get(name);
  if (schema === undefined) {
    throw new GatewayError("INVALID_REQUEST", 400, "The x-promptgate-schema header names no known schema.", {
      param: "x-promptgate-schema",
    });
  }
  return schema;
}
