import type { PolicyVersion } from "../policy/policy.js";
import { type AnswerCheck, checkAnswer } from "../schema/check-answer.js";
import type { StructuredOutput } from "../surfaces/surface.js";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";

/** A whole response body after validation: the body to send (repaired if a repair applied) and the check. */
export interface ValidatedBody {
  body: JsonObject;
  check: AnswerCheck;
}

/**
 * Validates the answer a whole response body carries. Undefined when the body is not JSON or
 * carries no answer text (e.g. only a tool call): there is nothing to validate.
 */
export function validateAnswerBody(
  bytes: Uint8Array,
  output: StructuredOutput,
  fullSchema: unknown,
  policy: PolicyVersion,
): ValidatedBody | undefined {
  let response: unknown;
  try {
    response = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
  if (!isObject(response)) return undefined;
  const text = output.answerText(response);
  if (text === undefined) return undefined;
  const check = checkAnswer(fullSchema, text, policy.policy.repair);
  const body = check.repair === undefined ? response : output.withAnswerText(response, check.repair.repaired);
  return { body, check };
}
