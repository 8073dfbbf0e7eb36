import { maskQuoted } from "../errors/mask-quoted.js";
import { redactKeys } from "../errors/redact-keys.js";

/**
 * Where the gateway failed on its own side: handling a call, observing its stream, remembering the
 * prefix its answer left, storing its record, or in the app outside any call's handling.
 */
export type InternalStage = "call" | "stream" | "remember-prefix" | "app" | "record" | "release" | "job" | "sweep";

/** What a call record keeps of an internal failure: where, and the error's class. */
export interface InternalErrorNote {
  during: InternalStage;
  class: string;
}

/** The one log line of an internal error, at `error` level: what the call record cannot hold. */
export interface InternalErrorLine extends InternalErrorNote {
  event: "internal_error";
  ref: string;
  /** The error's message and frames, then its causes'; quoted parts masked, keys redacted, bounded. */
  stack: string;
}

const maxStackLength = 8_000;
const maxMessageLength = 1_000;
const maxFrames = 30;
const maxCauses = 3;
const frame = /^\s+at /;

/**
 * The log line of an internal error of call `ref`. A message may quote what the gateway was reading
 * (V8's `JSON.parse` messages quote the text), so every quoted part of it is masked; frames are
 * code locations. Known `secrets` and everything shaped like a key are redacted.
 */
export function internalErrorLine(
  ref: string,
  cause: unknown,
  during: InternalStage,
  secrets: readonly string[],
): InternalErrorLine {
  const stack = redactKeys(describe(cause, 0), secrets).slice(0, maxStackLength);
  return { event: "internal_error", ref, during, class: errorClassOf(cause), stack };
}

/** An error's class: its `name`, or its constructor's where the name is the inherited `Error`. */
export function errorClassOf(cause: unknown): string {
  if (!(cause instanceof Error)) return typeof cause;
  const constructorName = cause.constructor?.name;
  const name = cause.name === "Error" && constructorName ? constructorName : cause.name;
  return name.slice(0, 100);
}

function describe(cause: unknown, depth: number): string {
  // A thrown value that is no Error has no stack, and may be anything the code held.
  if (!(cause instanceof Error)) return `(a thrown ${typeof cause} value, not shown)`;
  const frames = (cause.stack ?? "").split("\n").filter((line) => frame.test(line));
  const lines = [`${errorClassOf(cause)}: ${maskQuoted(cause.message.slice(0, maxMessageLength))}`];
  lines.push(...frames.slice(0, maxFrames));
  if (cause.cause !== undefined && depth < maxCauses) lines.push(`caused by: ${describe(cause.cause, depth + 1)}`);
  return lines.join("\n");
}
