import type { Deps, UpstreamResponse } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import { providerRejection, validateAnswer } from "../schema/diagnostics.js";
import type { MeasuredEndpoint, StructuredOutput } from "../surfaces/surface.js";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";
import type { PromptSize } from "../window/prompt-size.js";
import { observeStream } from "./observe-stream.js";
import type { PreparedCall } from "./prepare-call.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { rememberPrefix } from "./remember-prefix.js";
import { validateAnswerBody } from "./validate-answer-body.js";

/** Everything the last step of a call needs. */
export interface FinishInput {
  deps: Deps;
  endpoint: MeasuredEndpoint;
  policy: PolicyVersion;
  prepared: PreparedCall;
  /** The prompt_size of the representation sent (the provider check's, or the preflight's for counts). */
  size: PromptSize;
  /** The path below the surface's mount. */
  path: string;
  response: UpstreamResponse;
  record: CallRecord;
  headers: Record<string, string>;
}

/** The client's response; `recordLater` when a stream records the call itself at its end. */
export interface FinishedAnswer {
  response: Response;
  recordLater: boolean;
}

/**
 * Relays the provider's answer. A whole answer is validated (and repaired where a rule
 * applies) before the client sees it when the policy validates and the call has a full
 * schema; a stream passes through as it arrives and is validated at its end, for the
 * record. What a successful answer leaves at the provider (a cached content, a stored
 * response) is remembered for the calls that will refer to it.
 */
export async function finishAnswer(input: FinishInput): Promise<FinishedAnswer> {
  const { endpoint, prepared, response, headers } = input;
  const output = endpoint.structuredOutput;
  const schema = prepared.fullSchema;
  if (response.status === 400 && output !== undefined && schema !== undefined) {
    return await relaySchemaRejection(input, output);
  }
  const validating = output !== undefined && schema !== undefined && input.policy.policy.validation.enabled;
  const observing = validating || endpoint.prefixEffect !== undefined;
  if (!isSuccess(response.status) || !observing) {
    return { response: await relayResponse(response, prepared.call.stream, headers), recordLater: false };
  }
  if (prepared.call.stream) return finishStream(input, validating ? output : undefined);
  const bytes = await response.bytes();
  const body = parseObject(bytes);
  let sent: Uint8Array<ArrayBuffer> | string = bytes;
  if (body !== undefined && validating) sent = validateWholeAnswer(input, output, bytes, body);
  if (body !== undefined) await remember(input, body);
  return {
    response: new Response(sent, { status: response.status, headers: relayedHeaders(response, headers) }),
    recordLater: false,
  };
}

/** Validates a whole answer; returns the body to send, or throws 422 under `on_invalid = "error"`. */
function validateWholeAnswer(
  input: FinishInput,
  output: StructuredOutput,
  bytes: Uint8Array<ArrayBuffer>,
  body: JsonObject,
): Uint8Array<ArrayBuffer> | string {
  const { policy, prepared, record, headers } = input;
  const validated = validateAnswerBody(body, output, prepared.fullSchema, policy);
  if (validated === undefined) return bytes;
  const { validation, repair } = validated.check;
  record.validation = validation;
  if (repair !== undefined) record.repair = { rule: repair.rule, original: repair.original };
  const onInvalid = policy.policy.validation.on_invalid;
  if (!validation.valid && onInvalid === "error") {
    throw new GatewayError(
      "RESPONSE_SCHEMA_INVALID",
      422,
      "The model's answer does not conform to the response schema.",
      {
        diagnostics: validation,
      },
    );
  }
  headers["x-promptgate-validation"] = validation.valid ? "valid" : "invalid";
  if (onInvalid === "annotate") return JSON.stringify({ ...validated.body, promptgate: { validation } });
  return repair === undefined ? bytes : JSON.stringify(validated.body);
}

/** Passes a stream through; at its end, validates the first answer for the record and remembers any prefix. */
function finishStream(input: FinishInput, output: StructuredOutput | undefined): FinishedAnswer {
  const { deps, endpoint, prepared, response, record, headers } = input;
  let answer: string | undefined;
  let finalResponse: JsonObject | undefined;
  const stream = observeStream(response.stream(), response.headers["content-type"] ?? "", {
    onEvent(event) {
      const text = output?.streamedText(event);
      if (text !== undefined) answer = (answer ?? "") + text;
      finalResponse = endpoint.finalResponseOf?.(event) ?? finalResponse;
    },
    onEnd(complete) {
      if (complete && output !== undefined && answer !== undefined) {
        record.validation = validateAnswer(prepared.fullSchema, answer);
      }
      const remembered = complete && finalResponse !== undefined ? remember(input, finalResponse) : Promise.resolve();
      void remembered.catch(() => undefined).then(() => deps.recordCall(record));
    },
  });
  return {
    response: new Response(stream, { status: response.status, headers: relayedHeaders(response, headers) }),
    recordLater: true,
  };
}

/** Records the prefix effect of a successful answer, if its route has one. */
async function remember(input: FinishInput, response: JsonObject): Promise<void> {
  const effect = input.endpoint.prefixEffect?.(response, input.path, input.deps.now().getTime());
  if (effect !== undefined) await rememberPrefix(input.deps, effect, { call: input.prepared.call, size: input.size });
}

/**
 * A provider's 400 about the response schema is reported like a local validation failure,
 * in the surface's native shape and without the provider's text; any other 400 is relayed.
 */
async function relaySchemaRejection(input: FinishInput, output: StructuredOutput): Promise<FinishedAnswer> {
  const { response, record, headers } = input;
  const bytes = await response.bytes();
  const errorBody = parseObject(bytes);
  if (errorBody !== undefined && output.rejectsSchema(errorBody)) {
    const validation = providerRejection("schema");
    record.validation = validation;
    throw new GatewayError("INVALID_REQUEST", 400, "The provider rejected the response schema.", {
      diagnostics: validation,
    });
  }
  return {
    response: new Response(bytes, { status: 400, headers: relayedHeaders(response, headers) }),
    recordLater: false,
  };
}

function parseObject(bytes: Uint8Array): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
