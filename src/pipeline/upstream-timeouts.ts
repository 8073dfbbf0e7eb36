import { UpstreamTimedOut, type UpstreamTimeoutStage } from "../errors/upstream-timed-out.js";
import { type AbortNotice, CallNotice } from "../http/abort-notice.js";
import type { UpstreamTimeouts } from "../policy/policy.js";

/**
 * The stage timeouts of one provider request (contract section 11), one timer at a time:
 * - `connect`, from sending until the transport reports the connection open and the request going out
 *   (`connected`); a transport that cannot tell reports it as it starts, and then `connect` bounds nothing;
 * - `first_byte`, for a streamed call only, from then until the answer's head (status and headers) arrives
 *   (`answered`); a non-streamed answer arrives whole and is bounded by the policy's deadline alone;
 * - `idle`, while the gateway waits on the answer's stream for its next bytes (from its head on, so a head
 *   followed by silence is idle too); time the client takes to read does not count.
 * A timeout that fires aborts the request's signal with `UpstreamTimedOut`, which `fired` then gives.
 */
export interface RequestTimeouts {
  /** Aborts the request: when the call's own signal does (client gone, deadline passed), or a timeout fires. */
  readonly signal: AbortNotice;
  /** The transport's report: the connection is open and the request goes out. */
  connected(): void;
  /** The answer's head arrived, or the request failed: nothing is timed until its body is streamed. */
  answered(): void;
  /** The timeout that fired, if one did. */
  fired(): UpstreamTimedOut | undefined;
  /** The answer's body, each read bounded by `idle`: a stall errors it with the `idle` timeout. */
  streamed(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array>;
}

/** Starts timing one provider request of a call whose signal is `call`; `firstByte` only for a streamed call. */
export function startRequestTimeouts(
  call: AbortNotice,
  timeouts: UpstreamTimeouts,
  streamed: boolean,
): RequestTimeouts {
  const signal = new CallNotice();
  const callAborted = () => signal.abort(call.reason);
  if (call.aborted) callAborted();
  else call.addEventListener("abort", callAborted, { once: true });
  let stage: UpstreamTimeoutStage | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let fired: UpstreamTimedOut | undefined;

  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
    stage = undefined;
  };
  const start = (next: UpstreamTimeoutStage, seconds: number, onFire?: (timedOut: UpstreamTimedOut) => void) => {
    stop();
    stage = next;
    timer = setTimeout(
      () => {
        timer = undefined;
        // A request already aborted (the client left, the deadline passed) did not time out.
        if (signal.aborted) return;
        fired = new UpstreamTimedOut(next);
        signal.abort(fired);
        onFire?.(fired);
      },
      Math.ceil(seconds * 1000),
    );
    // Where timers can be unreferenced (Node), a pending timeout does not keep the process alive.
    (timer as { unref?: () => void }).unref?.();
  };

  start("connect", timeouts.connect);
  return {
    signal,
    connected() {
      if (stage !== "connect") return;
      if (streamed) start("first_byte", timeouts.firstByte);
      else stop();
    },
    answered: stop,
    fired: () => fired,
    streamed(body) {
      const reader = body.getReader();
      const read = () =>
        new Promise<ReadableStreamReadResult<Uint8Array>>((resolve, reject) => {
          if (fired !== undefined) return reject(fired);
          start("idle", timeouts.idle, (timedOut) => {
            reject(timedOut);
            reader.cancel(timedOut).catch(() => undefined);
          });
          reader.read().then(resolve, reject);
        });
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            let chunk: ReadableStreamReadResult<Uint8Array>;
            try {
              chunk = await read();
            } finally {
              stop();
            }
            if (chunk.done) controller.close();
            else controller.enqueue(chunk.value);
          },
          cancel(reason) {
            stop();
            return reader.cancel(reason);
          },
        },
        // Pulled only while someone reads: a client that reads slowly is not a stalled provider.
        { highWaterMark: 0 },
      );
    },
  };
}
