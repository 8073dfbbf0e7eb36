import { maskQuoted } from "./mask-quoted.js";
import { redactKeys } from "./redact-keys.js";

/** How much of a provider's error text the call record keeps. */
const recordedTextLength = 2_000;
/** How much of it is read at all; the rest is cut before. */
const readTextLength = 65_536;

/** A provider's error type, code or status: an identifier or a number, never free text. */
const identifier = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * What the call record keeps of a provider's error text: of a JSON error body (OpenAI's,
 * Anthropic's, Gemini's, an OpenAI-compatible server's `detail`), only the error's `type`, `code`
 * and `status` where they are identifiers, and its message; of any other text, the text. Every
 * quoted part of the message is masked (providers quote the request values they object to, which
 * may be the prompt), keys are redacted, and the result is bounded.
 */
export function recordedErrorText(text: string, secrets: readonly string[]): string {
  const read = text.slice(0, readTextLength);
  const body = jsonOf(read);
  const recorded = body === undefined ? maskQuoted(read) : summaryOf(body);
  return redactKeys(recorded, secrets).slice(0, recordedTextLength);
}

function summaryOf(body: unknown): string {
  const outer = Array.isArray(body) ? body[0] : body;
  if (!isRecord(outer)) return "(a JSON error body without a message)";
  const error = isRecord(outer.error) ? outer.error : outer;
  const labels: string[] = [];
  for (const name of ["type", "code", "status"]) {
    const value = error[name];
    if ((typeof value === "string" && identifier.test(value)) || Number.isInteger(value)) {
      labels.push(`${name}=${String(value)}`);
    }
  }
  const message = messageOf(outer, error);
  const text = message === undefined ? "(no message)" : maskQuoted(message);
  return labels.length === 0 ? text : `${labels.join(" ")}: ${text}`;
}

function messageOf(outer: Record<string, unknown>, error: Record<string, unknown>): string | undefined {
  if (typeof error.message === "string") return error.message;
  if (typeof outer.error === "string") return outer.error;
  const detail = outer.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    // FastAPI's validation errors: each entry's `msg`, never its `input` (the request echoed).
    const messages = detail.flatMap((entry) => (isRecord(entry) && typeof entry.msg === "string" ? [entry.msg] : []));
    if (messages.length > 0) return messages.join("; ");
  }
  return undefined;
}

function jsonOf(text: string): unknown {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
