import type { Deps, UpstreamResponse } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import { providerRejection, validateAnswer } from "../schema/diagnostics.js";
import type { MeasuredEndpoint, StructuredOutput } from "../surfaces/surface.js";
import { isObject } from "../surfaces/wire-fields.js";
import { observeAnswerStream } from "./observe-answer-stream.js";
import type { PreparedCall } from "./prepare-call.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { validateAnswerBody } from "./validate-answer-body.js";

/** Everything the last step of a call needs. */
export interface FinishInput {
  deps: Deps;
  endpoint: MeasuredEndpoint;
  policy: PolicyVersion;
  prepared: PreparedCall;
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
 * Relays the provider's answer. When the policy validates and the call has a full schema, a
 * whole answer is validated (and repaired where a rule applies) before the client sees it;
 * a stream passes through as it arrives and is validated at its end, for the record.
 */
export async function finishAnswer(input: FinishInput): Promise<FinishedAnswer> {
  const { endpoint, policy, prepared, response, record, headers } = input;
  const output = endpoint.structuredOutput;
  if (output === undefined || prepared.fullSchema === undefined) {
    return { response: await relayResponse(response, prepared.call.stream, headers), recordLater: false };
  }
  if (response.status === 400) return await relaySchemaRejection(response, output, record, headers);
  if (!policy.policy.validation.enabled || !isSuccess(response.status)) {
    return { response: await relayResponse(response, prepared.call.stream, headers), recordLater: false };
  }
  if (prepared.call.stream) {
    const stream = observeAnswerStream(response.stream(), response.headers["content-type"] ?? "", output, (text) => {
      if (text !== undefined) record.validation = validateAnswer(prepared.fullSchema, text);
      input.deps.recordCall(record);
    });
    const relayed = new Response(stream, { status: response.status, headers: relayedHeaders(response, headers) });
    return { response: relayed, recordLater: true };
  }
  const bytes = await response.bytes();
  const validated = validateAnswerBody(bytes, output, prepared.fullSchema, policy);
  if (validated === undefined) {
    return {
      response: new Response(bytes, { status: response.status, headers: relayedHeaders(response, headers) }),
      recordLater: false,
    };
  }
  const { validation, repair } = validated.check;
  record.validation = validation;
  if (repair !== undefined) record.repair = { rule: repair.rule, original: repair.original };
  if (!validation.valid && policy.policy.validation.on_invalid === "error") {
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
  const annotate = policy.policy.validation.on_invalid === "annotate";
  const unchanged = repair === undefined && !annotate;
  const body = unchanged
    ? bytes
    : JSON.stringify(annotate ? { ...validated.body, promptgate: { validation } } : validated.body);
  return {
    response: new Response(body, { status: response.status, headers: relayedHeaders(response, headers) }),
    recordLater: false,
  };
}

/**
 * A provider's 400 about the response schema is reported like a local validation failure,
 * in the surface's native shape and without the provider's text; any other 400 is relayed.
 */
async function relaySchemaRejection(
  response: UpstreamResponse,
  output: StructuredOutput,
  record: CallRecord,
  headers: Record<string, string>,
): Promise<FinishedAnswer> {
  const bytes = await response.bytes();
  let errorBody: unknown;
  try {
    errorBody = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    errorBody = undefined;
  }
  if (isObject(errorBody) && output.rejectsSchema(errorBody)) {
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
