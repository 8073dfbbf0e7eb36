import { invalidRequest } from "../errors/gateway-error.js";

/** The case and call label a request names, for its record. */
export interface CallLabels {
  caseId: string | undefined;
  callLabel: string | undefined;
}

/**
 * The pattern of `x-promptgate-case` and `x-promptgate-call`: 1 to 256 printable ASCII characters
 * (space to `~`). The record and the log line keep both verbatim, so they are bounded before either
 * is written.
 */
const callLabelPattern = /^[\x20-\x7e]{1,256}$/;

/** The case and call label of a request, or 400 INVALID_REQUEST naming the header that breaks the pattern. */
export function callLabels(headers: Headers): CallLabels {
  return { caseId: labelOf(headers, "x-promptgate-case"), callLabel: labelOf(headers, "x-promptgate-call") };
}

function labelOf(headers: Headers, name: string): string | undefined {
  const value = headers.get(name);
  if (value === null) return undefined;
  // The message names the header and the pattern, never the value.
  if (!callLabelPattern.test(value))
    throw invalidRequest(`The ${name} header must hold 1 to 256 printable ASCII characters.`, name);
  return value;
}
