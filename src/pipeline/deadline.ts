/** A call's upstream deadline: a signal that aborts when it passes, and a way to stop its timer. */
export interface Deadline {
  signal: AbortSignal;
  /** Whether the deadline has passed (and so aborted the signal). */
  passed(): boolean;
  /** Stops the timer once the call has ended, so a finished call holds no timer until its deadline. */
  clear(): void;
}

/** Starts the deadline of one provider call, `seconds` from now. */
export function startDeadline(seconds: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeadlinePassed()), Math.ceil(seconds * 1000));
  // Where timers can be unreferenced (Node), a pending deadline does not keep the process alive.
  (timer as { unref?: () => void }).unref?.();
  return {
    signal: controller.signal,
    passed: () => controller.signal.aborted,
    clear: () => clearTimeout(timer),
  };
}

/** The reason a deadline aborts with; holds no request data. */
class DeadlinePassed extends Error {
  override readonly name = "TimeoutError";
  constructor() {
    super("The upstream deadline passed.");
  }
}
