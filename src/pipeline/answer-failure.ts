import type { Deps } from "../deps.js";
import { classifyUpstreamAnswer, timedOutStageOf } from "../errors/classify.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { relayedHeaders } from "./relay-response.js";
import type { UpstreamCall } from "./upstream-call.js";

/** Whether a provider's status is a failure the classifier answers. */
export function isFailure(status: number): boolean {
  return status >= 400;
}

/** A provider's failed answer and where it goes. */
export interface FailedCall {
  deps: Deps;
  call: UpstreamCall;
  policy: PolicyVersion;
  response: UpstreamResponse;
  record: CallRecord;
  headers: Record<string, string>;
  /** The body, where it has been read already. */
  bytes?: Uint8Array<ArrayBuffer>;
}

/**
 * Answers a provider's failed answer: classified once, its text kept only in the call record.
 * Throws the class's error for the surface to render natively, unless the policy passes upstream
 * error text through (`upstream_errors.text = "passthrough"`): then the provider's answer is
 * relayed as it came, and only recorded.
 */
export async function answerFailure(failed: FailedCall): Promise<Response> {
  const { deps, call, policy, response, record, headers } = failed;
  const bytes = failed.bytes ?? (await response.bytes());
  const error = classifyUpstreamAnswer(
    { status: response.status, headers: response.headers, text: new TextDecoder().decode(bytes) },
    { recognise: call.provider.classifyError, now: deps.now().getTime(), secrets: call.secrets() },
  );
  if (policy.policy.upstream_errors.text !== "passthrough") throw error;
  noteFailure(record, error);
  return new Response(bytes, { status: response.status, headers: relayedHeaders(call, response, headers) });
}

/** Puts a failure's code, and what the provider said, into the call record. */
export function noteFailure(record: CallRecord, error: GatewayError): void {
  record.error = error.code;
  if (error.details.upstreamError !== undefined) record.upstream_error = error.details.upstreamError;
  const timedOut = timedOutStageOf(error.details.upstreamError?.reason);
  if (timedOut !== undefined) record.upstream_timeout = timedOut;
}
