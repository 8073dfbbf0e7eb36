import { EventEmitter } from "node:events";

/**
 * SIGTERM and SIGINT from `source`, a repeat of the same signal within `windowMs` of the one let through
 * dropped. A Ctrl-C in a terminal reaches the gateway twice, from the terminal and forwarded by `npm start`,
 * and is still one request to drain; a person pressing it again a moment later still cuts the drain short.
 */
export function deduplicatedSignals(
  source: Pick<NodeJS.EventEmitter, "on"> = process,
  windowMs = 200,
  now = Date.now,
): NodeJS.EventEmitter {
  const signals = new EventEmitter();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    let last: number | undefined;
    source.on(signal, () => {
      const at = now();
      if (last !== undefined && at - last < windowMs) return;
      last = at;
      signals.emit(signal, signal);
    });
  }
  return signals;
}
