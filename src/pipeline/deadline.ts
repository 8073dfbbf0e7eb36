import { type AbortNotice, CallNotice } from "../http/abort-notice.js";
import type { UpstreamTimeouts } from "../policy/policy.js";

/** A call's upstream deadline: a signal that aborts when it passes or the client goes away, and a way to stop it. */
export interface Deadline {
  signal: AbortNotice;
  /** Whether the deadline has passed (and so aborted the signal); a client that left does not count. */
  passed(): boolean;
  /** Stops the timer and the client watch once the call has ended, so a finished call holds neither. */
  clear(): void;
  /** The stage timeouts of each of the call's provider requests, where its policy resolved them (else the configuration's). */
  timeouts: UpstreamTimeouts | undefined;
}

/**
 * Starts the deadline of one provider call, `seconds` from now. Its one signal also aborts when
 * `client` does: one notice instead of `AbortSignal.any`, which costs several signals per call.
 */
export function startDeadline(seconds: number, client?: AbortNotice, timeouts?: UpstreamTimeouts): Deadline {
  const signal = new CallNotice();
  let passed = false;
  const timer = setTimeout(
    () => {
      // A call its client already cancelled has not run out of time.
      if (signal.aborted) return;
      passed = true;
      signal.abort(new DeadlinePassed());
    },
    Math.ceil(seconds * 1000),
  );
  // Where timers can be unreferenced (Node), a pending deadline does not keep the process alive.
  (timer as { unref?: () => void }).unref?.();
  const clientLeft = () => signal.abort(client?.reason);
  if (client?.aborted) clientLeft();
  else client?.addEventListener("abort", clientLeft, { once: true });
  return {
    signal,
    timeouts,
    passed: () => passed,
    clear: () => {
      clearTimeout(timer);
      client?.removeEventListener("abort", clientLeft);
    },
  };
}

/** The reason a deadline aborts with; holds no request data. */
class DeadlinePassed extends Error {
  override readonly name = "TimeoutError";
  constructor() {
    super("The upstream deadline passed.");
  }
}
