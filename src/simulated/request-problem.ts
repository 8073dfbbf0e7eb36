import type { JsonObject } from "./json-value.js";

/** Why a simulated provider refuses a request; each provider words it natively. */
export type RequestProblem =
  | { kind: "unparseable" }
  | { kind: "missing"; field: string }
  | { kind: "invalid"; field: string; expected: string };

/** One required field: its name, what it must be, and the check for that. */
export interface RequiredField {
  field: string;
  expected: string;
  check: (value: unknown) => boolean;
}

/** The first problem with a body's required fields, or `undefined` when all are present and valid. */
export function findRequestProblem(body: JsonObject, fields: readonly RequiredField[]): RequestProblem | undefined {
  for (const { field, expected, check } of fields) {
    const value = body[field];
    if (value === undefined || value === null) return { kind: "missing", field };
    if (!check(value)) return { kind: "invalid", field, expected };
  }
  return undefined;
}
