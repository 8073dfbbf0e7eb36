/**
 * Work the gateway has started and not finished (requests being answered, records being
 * written), so that a shutdown closes the store only after the last record is committed.
 */
export interface PendingWork {
  /** Returns `work` itself; `settled()` waits for it. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * Resolves once nothing is pending, looked at again after a turn of the event loop: a stream's
   * record is written only after its other writes settle, and a cut-off call records its end late.
   */
  settled(): Promise<void>;
}

/**
 * An empty set of pending work: a count, not a set of promises, so that tracking a call costs an increment and one
 * `then` (the count is all `settled` needs).
 */
export function pendingWork(): PendingWork {
  let pending = 0;
  let waiting: (() => void)[] = [];
  const done = () => {
    pending -= 1;
    if (pending > 0) return;
    const idle = waiting;
    waiting = [];
    for (const resolve of idle) resolve();
  };
  return {
    track(work) {
      pending += 1;
      work.then(done, done);
      return work;
    },
    async settled() {
      do {
        if (pending > 0) await new Promise<void>((resolve) => waiting.push(resolve));
        await new Promise((resolve) => setImmediate(resolve));
      } while (pending > 0);
    },
  };
}
