import type { Deps } from "../deps.js";
import { classifyUpstreamAnswer } from "../errors/classify.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { UpstreamResponse } from "../transport/transport.js";
import type { Recorder } from "./call-recorder.js";
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
  recorder: Recorder;
  /** The gateway's response headers. */
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
  const { deps, call, policy, response, recorder, headers } = failed;
  const bytes = failed.bytes ?? (await response.bytes());
  const error = classifyUpstreamAnswer(
    { status: response.status, headers: response.headers, text: new TextDecoder().decode(bytes) },
    { recognise: call.provider.classifyError, now: deps.now().getTime(), secrets: call.secrets() },
  );
  if (policy.policy.upstream_errors.text !== "passthrough") throw error;
  recorder.noteFailure(error);
  return new Response(bytes, { status: response.status, headers: relayedHeaders(call, response, headers) });
}
