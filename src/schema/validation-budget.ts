import type { ValidatorError } from "./validator-error.js";

// A validator can spend time exponential in the schema on one answer: a chain of `$ref`s to unions checks the same
// value once per path through the alternatives (4 alternatives, 8 levels: up to 4^8 paths). Every validation gets a
// budget of work, counted where a validator repeats itself (each `$ref` it follows), of a fixed part and a part
// proportional to the answer: a large answer to a recursive schema follows a reference or more per node of it.

/** The work one validation may do, in references followed: a fixed part, and `perNode` for each answer node. */
export interface ValidationBudget {
  readonly base: number;
  readonly perNode: number;
}

/** Ajv's code: ~1 µs a reference where every alternative fails, so ~20 ms at most for a small answer. */
export const ajvBudget: ValidationBudget = { base: 20_000, perNode: 8 };

/** The interpretive validator, per pass: ~5–20 µs a reference where every alternative fails. */
export const interpretedBudget: ValidationBudget = { base: 2_000, perNode: 4 };

/** At most this many distinct errors of a validator are described; past it, the diagnostics say they were cut short. */
export const maxCollectedErrors = 500;

/** At most this many of a validator's errors are read to find them (the same error may be reported many times). */
export const maxReadErrors = 20 * maxCollectedErrors;

/** Thrown by a validator that spent its budget on one answer: the answer is invalid, its detail cut short. */
export class ValidationBudgetExhausted extends Error {
  override readonly name = "ValidationBudgetExhausted";

  constructor() {
    super("The validation spent its work budget.");
  }

  static isInstance(error: unknown): error is ValidationBudgetExhausted {
    return error instanceof Error && error.name === "ValidationBudgetExhausted";
  }
}

/** The error a validator adds to its errors when it stopped collecting them before the end. */
export const cutShort: ValidatorError = { instancePath: "", schemaPath: "#", keyword: "budget", params: {} };

/** The steps one validation of this answer may take: the fixed part, or `perNode` for each of its values if more. */
export function stepsForAnswer(answer: unknown, budget: ValidationBudget): number {
  return Math.max(budget.base, budget.perNode * answerNodes(answer));
}

/** The values an answer holds, itself included; walked without recursion. */
function answerNodes(answer: unknown): number {
  let count = 0;
  const pending: unknown[] = [answer];
  while (pending.length > 0) {
    const node = pending.pop();
    count += 1;
    if (typeof node !== "object" || node === null) continue;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push(child);
  }
  return count;
}
