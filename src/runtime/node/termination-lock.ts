import type { Worker } from "node:worker_threads";

// Node 20 can crash the whole process (a segmentation fault in `node::errors::DecorateErrorStack`) when a worker
// thread is terminated while `new vm.Script` compiles: the compile fails without an exception, and Node reads the
// exception anyway. A lock shared by the worker and the thread that terminates it keeps the two apart: the worker
// holds it around such work, and the terminating thread closes it, once the worker is out, before it terminates.

const free = 0;
const held = 1;
/** Held, and to be closed by the worker as it leaves. */
const closing = 2;
const closed = 3;

/** A new lock, free; give its buffer to the worker (in `workerData`). */
export function terminationLock(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

/**
 * The worker's side: runs `work`, which must end soon, where terminating the thread could crash the process. Once
 * the lock is closing or closed, the worker waits here until it is terminated instead.
 */
export function withoutTermination<T>(lock: Int32Array, work: () => T): T {
  for (;;) {
    const state = Atomics.compareExchange(lock, 0, free, held);
    if (state === free) break;
    Atomics.wait(lock, 0, state);
  }
  try {
    return work();
  } finally {
    if (Atomics.compareExchange(lock, 0, held, free) === closing) Atomics.store(lock, 0, closed);
  }
}

/** Terminates `worker` once it is out of `lock`, which it cannot take again from the moment this is called. */
export function terminateOutsideLock(worker: Worker, lock: Int32Array, pollMs = 5): Promise<number> {
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      for (;;) {
        const state = Atomics.compareExchange(lock, 0, free, closed);
        // A thread that has ended (its `threadId` is -1 then) may have left the lock held.
        if (state === free || state === closed || worker.threadId === -1) {
          worker.terminate().then(resolve, reject);
          return;
        }
        // Held: the worker closes it as it leaves. Had it just left, the lock is free again: try once more.
        if (state === closing || Atomics.compareExchange(lock, 0, held, closing) === held) {
          setTimeout(attempt, pollMs);
          return;
        }
      }
    };
    attempt();
  });
}
