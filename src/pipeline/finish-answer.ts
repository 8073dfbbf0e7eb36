import type { Deps } from "../deps.js";
import { classifyTransportFailure, classifyUpstreamAnswer, upstreamFailure } from "../errors/classify.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { JsonObject } from "../json/json-object.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CompiledValidator } from "../schema/compiled-validator.js";
import { validateAnswer } from "../schema/diagnostics.js";
import { schemaRefusal } from "../schema/schema-refusal.js";
import type { AnsweredTurn } from "../sessions/session-turn.js";
import type { MeasuredEndpoint, StructuredOutput } from "../surfaces/surface.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { answerFailure, type FailedCall, isFailure } from "./answer-failure.js";
import type { Recorder } from "./call-recorder.js";
import type { PreparedCall } from "./prepare-call.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { relayStream, type StreamFailures, streamProtocol } from "./relay-stream.js";
import { rememberAnswer } from "./remember-prefix.js";
import type { ResponseHeaders } from "./response-headers.js";
import type { UpstreamCall } from "./upstream-call.js";
import { type CitationCheck, checkAnswerBody } from "./validate-answer-body.js";

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
  /** The call's record; a stream settles it at its end. */
  recorder: Recorder;
  headers: ResponseHeaders;
  /** The provider call, for classifying its failures. */
  call: UpstreamCall;
  ref: string;
  /** The session turn the call is, where its route has sessions. */
  turn?: AnsweredTurn | undefined;
  /** The source index the answer's citations are checked against, where the call names one. */
  citations?: CitationCheck | undefined;
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
    return { response: await relayResponse(input.call, response, headers.all()), recordLater: false };
  }
  // The call has a validator exactly where it has a full schema and the policy validates answers.
  const validator = output === undefined ? undefined : prepared.validator;
  if (prepared.call.stream) return finishStream(input, validator);
  const bytes = await response.bytes();
  const body = jsonObjectOf(bytes);
  if (body === undefined) throw malformedAnswer(input, bytes.length);
  let sent: Uint8Array<ArrayBuffer> | string = bytes;
  input.recorder.noteUsage(output?.usage(body));
  if (output !== undefined) input.recorder.noteResponseFacts(output.responseFacts(body));
  if (output !== undefined && (validator !== undefined || input.citations !== undefined)) {
    sent = checkWholeAnswer(input, output, bytes, body, validator);
  }
  await remember(input, body);
  return {
    response: new Response(sent, {
      status: response.status,
      headers: relayedHeaders(input.call, response, headers.all()),
    }),
    recordLater: false,
  };
}

/**
 * Checks a whole answer: its citations where the call names a source index, then its full schema where the policy
 * validates. Returns the body to send, or throws 422 under `on_invalid = "error"`.
 */
function checkWholeAnswer(
  input: FinishInput,
  output: StructuredOutput,
  bytes: Uint8Array<ArrayBuffer>,
  body: JsonObject,
  validator: CompiledValidator | undefined,
): Uint8Array<ArrayBuffer> | string {
  const { policy, headers, recorder } = input;
  const checked = checkAnswerBody(body, output, { validator, policy, citations: input.citations });
  if (checked === undefined) return bytes;
  if (input.citations !== undefined) {
    recorder.noteCitationsRemoved(checked.removed);
    headers.citationsRemoved(checked.removed.length);
  }
  const changed = checked.body !== body;
  const check = checked.check;
  if (check === undefined) return changed ? JSON.stringify(checked.body) : bytes;
  const { validation, repair } = check;
  recorder.noteValidation(validation, repair);
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
  headers.validation(validation.valid);
  if (onInvalid === "annotate") return JSON.stringify({ ...checked.body, promptgate: { validation } });
  return changed ? JSON.stringify(checked.body) : bytes;
}

/**
 * Relays a stream as it arrives; at its end, validates the first answer for the record, remembers
 * any prefix, and keeps the record before the stream's last bytes go out. Its failures end it with
 * the surface's native error event; a failure of the gateway's own at its end is recorded and logged,
 * and the stream still ends as the provider sent it.
 */
function finishStream(input: FinishInput, validator: CompiledValidator | undefined): FinishedAnswer {
  const { endpoint, response, recorder, headers } = input;
  const output = validator === undefined ? undefined : endpoint.structuredOutput;
  let answer: string | undefined;
  let finalResponse: JsonObject | undefined;
  const stream = relayStream(
    response.stream(),
    response.headers["content-type"] ?? "",
    {
      ...streamProtocol(input.call.surface),
      onEvent(event) {
        const reader = endpoint.structuredOutput;
        if (reader !== undefined) {
          recorder.noteUsage(reader.usage(event));
          recorder.noteResponseFacts(reader.responseFacts(event));
        }
        const text = output?.streamedText(event);
        if (text !== undefined) answer = (answer ?? "") + text;
        finalResponse = endpoint.finalResponseOf?.(event) ?? finalResponse;
      },
      async onEnd(complete, cancelled) {
        if (complete) input.call.timing.endedAt = performance.now();
        if (cancelled || input.call.client.aborted) recorder.decide("cancelled");
        try {
          if (complete && validator !== undefined && answer !== undefined) {
            recorder.noteValidation(validateAnswer(validator, answer));
          }
        } catch (cause) {
          recorder.internal(cause, "stream");
        }
        if (complete && finalResponse !== undefined) await remember(input, finalResponse);
        await recorder.settle();
      },
    },
    streamFailures(input),
  );
  return {
    response: new Response(stream, {
      status: response.status,
      headers: relayedHeaders(input.call, response, headers.all()),
    }),
    recordLater: true,
  };
}

/** A stream's failures: an error event of the provider's is classified like an error answer, a break like a lost call. */
function streamFailures(input: FinishInput): StreamFailures {
  const { deps, call, recorder, ref, policy } = input;
  return {
    replaceErrorEvent(data) {
      const error = classifyUpstreamAnswer(
        { status: undefined, headers: {}, text: data },
        { recognise: call.provider.classifyError, now: deps.now().getTime(), secrets: call.secrets() },
      );
      recorder.noteFailure(error);
      return policy.policy.upstream_errors.text === "passthrough"
        ? undefined
        : call.surface.renderStreamError(error, ref);
    },
    breakOff(cause) {
      const error = classifyTransportFailure(cause, call.deadline.passed(), call.secrets());
      if (!call.client.aborted) recorder.noteFailure(error);
      return call.surface.renderStreamError(error, ref);
    },
    internal(cause) {
      recorder.internal(cause, "stream");
    },
  };
}

/** A successful status whose body is not a JSON object: the provider failed to answer. */
function malformedAnswer(input: FinishInput, length: number): GatewayError {
  const text = `The provider's answer (${length} bytes) is not a JSON object.`;
  return upstreamFailure("upstream", input.response.status, text, input.call.secrets(), undefined, "malformed_answer");
}

function failedCall(input: FinishInput, bytes?: Uint8Array<ArrayBuffer>): FailedCall {
  const { deps, call, policy, response, recorder, headers } = input;
  return { deps, call, policy, response, recorder, headers: headers.all(), ...(bytes === undefined ? {} : { bytes }) };
}

/** Remembers the prefix effect of a successful answer, if its route has one (see `rememberAnswer`). */
function remember(input: FinishInput, response: JsonObject): Promise<void> {
  const measured = { call: input.prepared.call, size: input.size, turn: input.turn, upstream: input.call };
  return rememberAnswer(
    input.deps,
    input.endpoint.prefixEffect,
    { response, path: input.path, measured },
    input.recorder,
  );
}

/**
 * A provider's 400 about the response schema is reported like a local validation failure,
 * in the surface's native shape and without the provider's text; any other 400 is classified
 * like every failed answer.
 */
async function relaySchemaRejection(input: FinishInput, output: StructuredOutput): Promise<FinishedAnswer> {
  const { response, recorder } = input;
  const bytes = await response.bytes();
  const errorBody = jsonObjectOf(bytes);
  const refusal =
    errorBody === undefined ? undefined : output.schemaRefusal(errorBody, input.prepared.call.responseSchema);
  if (refusal !== undefined) {
    const validation = schemaRefusal(refusal, input.prepared.call.responseSchema);
    recorder.noteValidation(validation);
    const text = new TextDecoder().decode(bytes);
    recorder.noteUpstreamError(
      upstreamFailure("INVALID_REQUEST", 400, text, input.call.secrets()).details.upstreamError,
    );
    throw new GatewayError("INVALID_REQUEST", 400, "The provider rejected the response schema.", {
      diagnostics: validation,
    });
  }
  return { response: await answerFailure(failedCall(input, bytes)), recordLater: false };
}
