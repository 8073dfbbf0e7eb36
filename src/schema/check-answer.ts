import type { RepairRule } from "../policy/policy.js";
import type { CompiledValidator } from "./compiled-validator.js";
import { type Validation, validateAnswer } from "./diagnostics.js";
import { applyRepair } from "./repair.js";

/** The outcome of checking one answer against its full schema, repair included. */
export interface AnswerCheck {
  validation: Validation;
  /** Set when a repair rule applied and the repaired answer passed the full schema. */
  repair?: {
    rule: string;
    /** The answer as the provider gave it. */
    original: string;
    /** The repaired answer, as compact JSON. */
    repaired: string;
  };
}

/**
 * Validates an answer with the validator of its full schema; an invalid one is offered to the policy's
 * repair rules, and a repair counts only if the repaired answer then validates in full.
 */
export function checkAnswer(
  validator: CompiledValidator,
  answerText: string,
  rules: readonly RepairRule[],
): AnswerCheck {
  const validation = validateAnswer(validator, answerText);
  if (validation.valid || rules.length === 0) return { validation };
  try {
    return repaired(validator, answerText, rules, validation);
  } catch (error) {
    // An answer too deep to copy or serialize is left as it is, with its first outcome.
    if (error instanceof RangeError) return { validation };
    throw error;
  }
}

function repaired(
  validator: CompiledValidator,
  answerText: string,
  rules: readonly RepairRule[],
  validation: Validation,
): AnswerCheck {
  let answer: unknown;
  try {
    answer = JSON.parse(answerText);
  } catch {
    return { validation };
  }
  const outcome = applyRepair(answer, rules);
  if (outcome === undefined) return { validation };
  const repaired = JSON.stringify(outcome.repaired);
  const repairedValidation = validateAnswer(validator, repaired);
  if (!repairedValidation.valid) return { validation };
  return { validation: repairedValidation, repair: { rule: outcome.rule, original: answerText, repaired } };
}
