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

/** An empty set of pending work. */
export function pendingWork(): PendingWork {
  const pending = new Set<Promise<unknown>>();
  return {
    track(work) {
      pending.add(work);
      const done = () => pending.delete(work);
      work.then(done, done);
      return work;
    },
    async settled() {
      do {
        await Promise.allSettled(pending);
        await new Promise((resolve) => setImmediate(resolve));
      } while (pending.size > 0);
    },
  };
}
