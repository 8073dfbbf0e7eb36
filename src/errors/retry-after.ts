const longestWaitMs = 86_400_000;
const number = /^\d+(?:\.\d+)?$/;

/**
 * How long a provider asks the client to wait, from `retry-after-ms` (milliseconds) or `retry-after`
 * (seconds or an HTTP date), as the OpenAI and Anthropic SDKs read them; undefined when absent,
 * malformed or longer than a day.
 */
export function retryAfterOf(headers: Readonly<Record<string, string>>, now: number): number | undefined {
  const milliseconds = headers["retry-after-ms"]?.trim();
  if (milliseconds !== undefined && number.test(milliseconds)) return bounded(Number(milliseconds));
  const after = headers["retry-after"]?.trim();
  if (after === undefined || after === "") return undefined;
  if (number.test(after)) return bounded(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : bounded(Math.max(0, date - now));
}

/** A protobuf Duration as JSON (`"34.4s"`) in milliseconds, as in Google's RetryInfo. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match?.[1] === undefined ? undefined : bounded(Number(match[1]) * 1000);
}

function bounded(milliseconds: number): number | undefined {
  return Number.isFinite(milliseconds) && milliseconds >= 0 && milliseconds <= longestWaitMs ? milliseconds : undefined;
}
