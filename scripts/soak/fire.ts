import { hasErrorEvent, hasFinalEvent } from "./provider-answers.js";
import type { Shot } from "./shots.js";

/** What became of one shot, as its client saw it. */
export interface Outcome {
  shot: Shot;
  /** Undefined when no response head arrived. */
  status?: number;
  /** The `promptgate.code` of an error answer. */
  code?: string;
  ref?: string;
  /** The whole answer arrived: a body read to its end, or a stream that reached its final event. */
  complete: boolean;
  finalEvent: boolean;
  errorEvent: boolean;
  location: boolean;
  /** The `x-promptgate-validation` of the answer, if any. */
  validation?: string;
  /** Milliseconds from sending the request to the end of its answer (or to its failure). */
  ms: number;
  /** Why the client got no complete answer, e.g. `TypeError: fetch failed` or `TimeoutError`. */
  failure?: string;
}

/** Keeps at most this much of an answer's text: every answer of the soak is short. */
const maxKeptChars = 64_000;

/**
 * Sends `shot` to the gateway at `origin` and reads its answer to the end (or until it breaks);
 * `onFinalEvent` is told as soon as a stream's final event has arrived.
 */
export async function fire(
  origin: string,
  shot: Shot,
  timeoutMs: number,
  onFinalEvent?: (shot: Shot) => void,
): Promise<Outcome> {
  const outcome: Outcome = { shot, complete: false, finalEvent: false, errorEvent: false, location: false, ms: 0 };
  const finalIn = (text: string) => shot.surface !== undefined && hasFinalEvent(shot.surface, text);
  const started = performance.now();
  let text = "";
  try {
    const response = await fetch(`${origin}${shot.path}`, {
      method: shot.method ?? "POST",
      headers: shot.headers,
      body: shot.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    outcome.status = response.status;
    outcome.ref = response.headers.get("x-promptgate-ref") ?? undefined;
    outcome.location = response.headers.has("location");
    outcome.validation = response.headers.get("x-promptgate-validation") ?? undefined;
    const decoder = new TextDecoder();
    try {
      const reader = response.body?.getReader();
      for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done; chunk = await reader?.read()) {
        if (text.length < maxKeptChars) text += decoder.decode(chunk.value, { stream: true });
        if (shot.stream && !outcome.finalEvent && finalIn(text)) {
          outcome.finalEvent = true;
          onFinalEvent?.(shot);
        }
      }
      outcome.complete = true;
    } finally {
      // A stream whose final event arrived before its connection broke was received whole.
      if (shot.stream && response.status === 200) {
        outcome.finalEvent ||= finalIn(text);
        outcome.errorEvent = hasErrorEvent(text);
        if (outcome.finalEvent) outcome.complete = true;
      }
    }
    if (response.status >= 400) outcome.code = errorCode(text);
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    outcome.failure = `${(error as Error).name}${cause?.message ? `: ${cause.message}` : ""}`;
  }
  outcome.ms = performance.now() - started;
  return outcome;
}

function errorCode(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { promptgate?: { code?: string } } };
    return body.error?.promptgate?.code ?? "?";
  } catch {
    return "not-json";
  }
}
