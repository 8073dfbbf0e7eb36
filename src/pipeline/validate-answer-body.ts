import type { PolicyVersion } from "../policy/policy.js";
import { type AnswerCheck, checkAnswer } from "../schema/check-answer.js";
import type { StructuredOutput } from "../surfaces/surface.js";
import type { JsonObject } from "../surfaces/wire-fields.js";

/** A whole response body after validation: the body to send (repaired if a repair applied) and the check. */
export interface ValidatedBody {
  body: JsonObject;
  check: AnswerCheck;
}

/**
 * Validates every answer (choice, candidate) a whole response body carries, repairing each
 * where a rule applies. Undefined when the body is not JSON or carries no answer text (e.g.
 * only a tool call): there is nothing to validate.
 */
export function validateAnswerBody(
  response: JsonObject,
  output: StructuredOutput,
  fullSchema: unknown,
  policy: PolicyVersion,
): ValidatedBody | undefined {
  let body: JsonObject = response;
  let reported: AnswerCheck | undefined;
  output.answerTexts(response).forEach((text, index) => {
    if (text === undefined) return;
    const check = checkAnswer(fullSchema, text, policy.policy.repair);
    if (check.repair !== undefined) body = output.withAnswerText(body, index, check.repair.repaired);
    // The first invalid answer is the one reported; with every answer valid, the first.
    if (reported === undefined || (reported.validation.valid && !check.validation.valid)) reported = check;
  });
  return reported === undefined ? undefined : { body, check: reported };
}
