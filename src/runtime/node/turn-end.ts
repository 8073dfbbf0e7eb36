/** The work waiting for the end of this turn of the event loop, in the order it was handed over. */
let waiting: (() => void)[] = [];

/** Runs the waiting work, and the work it hands over in turn, until none is left. */
function runWaiting(): void {
  while (waiting.length > 0) {
    const works = waiting;
    waiting = [];
    for (const work of works) {
      try {
        work();
      } catch (error) {
        // The rest still runs; the failure ends the process as an uncaught exception, as it would have on its own.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

let exitHooked = false;

/**
 * Runs `work` at the end of this turn of the event loop, once the turn's I/O callbacks and promise jobs are done (the
 * answers they write are on their way), together with the other work handed over in the turn, in order. Work handed
 * over while the queue runs (the log's write of the lines the calls' work logged) runs in the same pass. One queue
 * for the process; what waits when the process exits, through an uncaught exception too, runs first thing on `exit`.
 */
export function atTurnEnd(work: () => void): void {
  if (!exitHooked) {
    exitHooked = true;
    process.prependListener("exit", runWaiting);
  }
  if (waiting.length === 0) setImmediate(runWaiting);
  waiting.push(work);
}
