import type { JsonObject } from "../json/json-object.js";
import type { PolicyVersion } from "../policy/policy.js";
import { type AnswerCheck, checkAnswer } from "../schema/check-answer.js";
import type { CompiledValidator } from "../schema/compiled-validator.js";
import { truncatedAnswerValidation } from "../schema/truncated-answer.js";
import type { StructuredOutput } from "../surfaces/surface.js";
import { type CitationOptions, checkCitations, type RemovedCitation } from "../window/citations.js";

/** The source index a call's answer is checked against (`x-promptgate-sources`), and where its citations stand. */
export interface CitationCheck extends Required<CitationOptions> {
  sources: readonly string[];
}

/** What a whole answer is checked for: its full schema where the policy validates, its citations where named. */
export interface AnswerChecks {
  /** The full schema's validator, or undefined when answers are not validated. */
  validator: CompiledValidator | undefined;
  policy: PolicyVersion;
  citations: CitationCheck | undefined;
}

/**
 * A whole response body after its checks: the body to send (citations taken out, repaired where a repair applied),
 * the validation of the first invalid answer (else the first), and the citations taken out, by answer.
 */
export interface CheckedBody {
  body: JsonObject;
  check: AnswerCheck | undefined;
  removed: RemovedCitation[];
}

/**
 * Checks every answer (choice, candidate) a whole response body carries. Citations come first: an answer's unknown
 * and repeated source ids are taken out (seeds 003, 004), so that what is validated is what the client gets. Then
 * each answer is validated against the full schema and repaired where a rule applies. Undefined when the body
 * carries no answer text (e.g. only a tool call): there is nothing to check.
 */
export function checkAnswerBody(
  response: JsonObject,
  output: StructuredOutput,
  checks: AnswerChecks,
): CheckedBody | undefined {
  let body: JsonObject = response;
  let reported: AnswerCheck | undefined;
  let answered = false;
  const removed: RemovedCitation[] = [];
  const texts = output.answerTexts(response);
  texts.forEach((given, index) => {
    if (given === undefined) return;
    answered = true;
    let text = given;
    const cited = checks.citations === undefined ? undefined : citedAnswer(text, checks.citations);
    if (cited !== undefined && cited.removed.length > 0) {
      text = cited.text;
      // An answer's paths are its own; with several answers, each path says which one it is in.
      const prefix = texts.length > 1 ? `/${index}` : "";
      for (const citation of cited.removed) removed.push({ ...citation, path: `${prefix}${citation.path}` });
    }
    if (checks.validator === undefined) {
      if (text !== given) body = output.withAnswerText(body, index, text);
      return;
    }
    const check = checkAnswer(checks.validator, text, checks.policy.policy.repair);
    if (check.repair !== undefined) check.repair.original = given;
    // An answer the provider cut short is diagnosed by what came back of it, with the reason it stopped.
    const stopped = check.validation.valid ? undefined : output.stopReason(response, index);
    if (stopped !== undefined) check.validation = truncatedAnswerValidation(checks.validator, text, stopped);
    const sent = check.repair?.repaired ?? text;
    if (sent !== given) body = output.withAnswerText(body, index, sent);
    // The first invalid answer is the one reported; with every answer valid, the first.
    if (reported === undefined || (reported.validation.valid && !check.validation.valid)) reported = check;
  });
  return answered ? { body, check: reported, removed } : undefined;
}

/** An answer with its uncited sources taken out, or undefined when it is no JSON to check. */
function citedAnswer(text: string, citations: CitationCheck): { text: string; removed: RemovedCitation[] } | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return undefined;
  }
  try {
    const checked = checkCitations(answer, citations.sources, citations);
    return { text: checked.removed.length > 0 ? JSON.stringify(checked.answer) : text, removed: checked.removed };
  } catch (error) {
    // An answer nested too deep to copy is left as it is; its validation says what is wrong with it.
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
