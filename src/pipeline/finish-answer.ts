import type { Deps, UpstreamResponse } from "../deps.js";
import { classifyTransportFailure, classifyUpstreamAnswer, upstreamFailure } from "../errors/classify.js";
import { GatewayError } from "../errors/gateway-error.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import { providerRejection, validateAnswer } from "../schema/diagnostics.js";
import type { MeasuredEndpoint, StructuredOutput } from "../surfaces/surface.js";
import type { JsonObject } from "../surfaces/wire-fields.js";
import type { PromptSize } from "../window/prompt-size.js";
import { answerFailure, type FailedCall, isFailure, noteFailure } from "./answer-failure.js";
import type { PreparedCall } from "./prepare-call.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { relayStream, type StreamFailures } from "./relay-stream.js";
import { rememberPrefix } from "./remember-prefix.js";
import type { UpstreamCall } from "./upstream-call.js";
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
  /** The provider call, for classifying its failures. */
  call: UpstreamCall;
  ref: string;
  /** Records and logs the call; a stream calls it at its end. */
  settle: () => Promise<void>;
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
  if (isFailure(response.status)) {
    if (response.status === 400 && output !== undefined && schema !== undefined) {
      return await relaySchemaRejection(input, output);
    }
    return { response: await answerFailure(failedCall(input)), recordLater: false };
  }
  if (!isSuccess(response.status)) {
    return { response: await relayResponse(response, headers), recordLater: false };
  }
  const validating = output !== undefined && schema !== undefined && input.policy.policy.validation.enabled;
  if (prepared.call.stream) return finishStream(input, validating ? output : undefined);
  const bytes = await response.bytes();
  const body = jsonObjectOf(bytes);
  if (body === undefined) throw malformedAnswer(input, bytes.length);
  let sent: Uint8Array<ArrayBuffer> | string = bytes;
  if (validating) sent = validateWholeAnswer(input, output, bytes, body);
  await remember(input, body);
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

/**
 * Relays a stream as it arrives; at its end, validates the first answer for the record, remembers
 * any prefix, and records the call. Its failures end it with the surface's native error event.
 */
function finishStream(input: FinishInput, output: StructuredOutput | undefined): FinishedAnswer {
  const { endpoint, prepared, response, record, headers } = input;
  let answer: string | undefined;
  let finalResponse: JsonObject | undefined;
  const stream = relayStream(
    response.stream(),
    response.headers["content-type"] ?? "",
    {
      onEvent(event) {
        const text = output?.streamedText(event);
        if (text !== undefined) answer = (answer ?? "") + text;
        finalResponse = endpoint.finalResponseOf?.(event) ?? finalResponse;
      },
      onEnd(complete, cancelled) {
        if (cancelled || input.call.request.signal.aborted) record.decision = "cancelled";
        if (complete && output !== undefined && answer !== undefined) {
          record.validation = validateAnswer(prepared.fullSchema, answer);
        }
        const remembered = complete && finalResponse !== undefined ? remember(input, finalResponse) : Promise.resolve();
        void remembered.catch(() => undefined).then(input.settle);
      },
    },
    streamFailures(input),
  );
  return {
    response: new Response(stream, { status: response.status, headers: relayedHeaders(response, headers) }),
    recordLater: true,
  };
}

/** A stream's failures: an error event of the provider's is classified like an error answer, a break like a lost call. */
function streamFailures(input: FinishInput): StreamFailures {
  const { deps, call, record, ref, policy } = input;
  return {
    replaceErrorEvent(data) {
      const error = classifyUpstreamAnswer(
        { status: undefined, headers: {}, text: data },
        { recognise: call.surface.classifyError, now: deps.now().getTime(), secrets: call.secrets },
      );
      noteFailure(record, error);
      return policy.policy.upstream_errors.text === "passthrough"
        ? undefined
        : call.surface.renderStreamError(error, ref);
    },
    breakOff(cause) {
      const error = classifyTransportFailure(cause, call.deadline.passed(), call.secrets);
      if (!call.request.signal.aborted) noteFailure(record, error);
      return call.surface.renderStreamError(error, ref);
    },
  };
}

/** A successful status whose body is not a JSON object: the provider failed to answer. */
function malformedAnswer(input: FinishInput, length: number): GatewayError {
  const text = `The provider's answer (${length} bytes) is not a JSON object.`;
  return upstreamFailure("upstream", input.response.status, text, input.call.secrets);
}

function failedCall(input: FinishInput, bytes?: Uint8Array<ArrayBuffer>): FailedCall {
  const { deps, call, policy, response, record, headers } = input;
  return { deps, call, policy, response, record, headers, ...(bytes === undefined ? {} : { bytes }) };
}

/** Records the prefix effect of a successful answer, if its route has one. */
async function remember(input: FinishInput, response: JsonObject): Promise<void> {
  const effect = input.endpoint.prefixEffect?.(response, input.path, input.deps.now().getTime());
  if (effect !== undefined) await rememberPrefix(input.deps, effect, { call: input.prepared.call, size: input.size });
}

/**
 * A provider's 400 about the response schema is reported like a local validation failure,
 * in the surface's native shape and without the provider's text; any other 400 is classified
 * like every failed answer.
 */
async function relaySchemaRejection(input: FinishInput, output: StructuredOutput): Promise<FinishedAnswer> {
  const { response, record } = input;
  const bytes = await response.bytes();
  const errorBody = jsonObjectOf(bytes);
  if (errorBody !== undefined && output.rejectsSchema(errorBody)) {
    const validation = providerRejection("schema");
    record.validation = validation;
    const text = new TextDecoder().decode(bytes);
    record.upstream_error = upstreamFailure("INVALID_REQUEST", 400, text, input.call.secrets).details.upstreamError;
    throw new GatewayError("INVALID_REQUEST", 400, "The provider rejected the response schema.", {
      diagnostics: validation,
    });
  }
  return { response: await answerFailure(failedCall(input, bytes)), recordLater: false };
}
