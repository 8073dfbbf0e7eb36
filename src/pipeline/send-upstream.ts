import type { Deps } from "../deps.js";
import { classifyTransportFailure } from "../errors/classify.js";
import { failureReason } from "../errors/failure-reason.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { debugUpstream } from "./debug-steps.js";
import type { UpstreamCall } from "./upstream-call.js";
import { upstreamRequest } from "./upstream-request.js";
import { startRequestTimeouts } from "./upstream-timeouts.js";

/**
 * Sends a request of the call upstream: the client's, or with `method` one the gateway makes itself, with the stage
 * timeouts of contract section 11 (`startRequestTimeouts`; first byte for the client's own streamed request only). No
 * answer, or a body that fails while it is read whole, becomes `timeout` when the call's deadline has passed or a
 * stage timed out, and `upstream` otherwise. A streamed body's failures (an `idle` timeout among them) are the stream
 * relay's to answer. `fullSchema`, the client's response schema, is told to a simulated provider (`upstreamRequest`).
 */
export async function sendUpstream(
  deps: Deps,
  call: UpstreamCall,
  path: string,
  body: Uint8Array<ArrayBuffer> | undefined,
  method?: string,
  fullSchema?: unknown,
): Promise<UpstreamResponse> {
  let response: UpstreamResponse;
  const request = await upstreamRequest(call, path, body, method, fullSchema);
  const streamed = method === undefined && call.streamed;
  const timeouts = startRequestTimeouts(
    call.deadline.signal,
    call.deadline.timeouts ?? deps.config.upstreamTimeouts,
    streamed,
  );
  request.signal = timeouts.signal;
  request.connected = timeouts.connected;
  const startedAt = deps.now().getTime();
  const { timing } = call;
  timing.startedAt = performance.now();
  timing.firstByteAt = undefined;
  timing.endedAt = undefined;
  try {
    response = await deps.transport(request);
    timing.firstByteAt = performance.now();
  } catch (cause) {
    const passed = call.deadline.passed();
    const failure = timeouts.fired() ?? cause;
    debugUpstream(deps, call.ref, request, { reason: passed ? "deadline" : failureReason(failure) }, startedAt);
    throw classifyTransportFailure(failure, passed, call.secrets());
  } finally {
    timeouts.answered();
  }
  debugUpstream(deps, call.ref, request, { status: response.status }, startedAt);
  return {
    status: response.status,
    headers: response.headers,
    bytes: async () => {
      try {
        const bytes = await response.bytes();
        timing.endedAt = performance.now();
        return bytes;
      } catch (cause) {
        throw classifyTransportFailure(cause, call.deadline.passed(), call.secrets());
      }
    },
    stream: () => timeouts.streamed(response.stream()),
  };
}
