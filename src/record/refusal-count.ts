/** A request refused before authentication: counted, never recorded or logged one by one. */
export interface RefusedRequest {
  event: "refused_unauthenticated";
}

/** The sampled line that counts refusals, at `warn` level. */
export interface RefusalCountLine {
  event: "refused_unauthenticated";
  /** Refusals since the previous such line, this one included. */
  count: number;
  /** Refusals since the log was made (the process or isolate started), as a metric would count them. */
  total: number;
  /** When the first of `count` came. */
  since: string;
}

/** Counts one more refusal at `now` (epoch ms): the line to write, or undefined while one was written recently. */
export type RefusalCounter = (now: number) => RefusalCountLine | undefined;

/**
 * A counter of refused requests that yields a line at most once per `intervalMs`: the first
 * refusal after a quiet interval at once, later ones with the next refusal after the interval.
 * A flood thus costs one line a minute, not one line per request.
 */
export function refusalCounter(intervalMs = 60_000): RefusalCounter {
  let count = 0;
  let total = 0;
  let since = 0;
  let lastLine = Number.NEGATIVE_INFINITY;
  return (now) => {
    if (count === 0) since = now;
    count++;
    total++;
    if (now - lastLine < intervalMs) return undefined;
    const line: RefusalCountLine = {
      event: "refused_unauthenticated",
      count,
      total,
      since: new Date(since).toISOString(),
    };
    count = 0;
    lastLine = now;
    return line;
  };
}
