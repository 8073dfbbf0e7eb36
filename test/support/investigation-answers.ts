// The investigation_bootstrap_v22 answers the structured-output tests send through each surface.

/** A v22 answer loose enough for a test to break any part of it. */
export interface Answer {
  assessment: Record<string, unknown>;
  update: { working_brief: { findings: unknown[] }; retired: string[]; next_step: Record<string, unknown> };
  next: Record<string, unknown>;
}

/** The answers of one test file, carrying its `secret` in free-text fields. */
export function investigationAnswers(secret: string) {
  /** A valid investigation_bootstrap_v22 answer that carries the secret in free-text fields. */
  function validAnswer(): Answer {
    return {
      assessment: {
        summary: `Job N12 stalls after its third retry. ${secret}`,
        confidence: "medium",
        hypothesis_status: "open",
        entity_refs: ["N12"],
      },
      update: {
        working_brief: {
          findings: [
            {
              id: "F1",
              direction: "supports",
              text: "The retry loop stops after three attempts.",
              scope: `job runs of N12 ${secret}`,
              evidence_refs: ["E000001"],
            },
          ],
        },
        retired: [],
        next_step: { intent: "Read the scheduler log.", expected_signal: "A timeout before the third retry." },
      },
      next: {
        action: "tool/project.query",
        arguments: { kind: "log_search", query: "scheduler job=N12" },
        rationale: "The log shows why the loop ends.",
      },
    };
  }

  /** The contract's example: the first finding compressed into a sentence. */
  function answerWithStringFinding(): Answer {
    const answer = validAnswer();
    answer.update.working_brief.findings[0] = `${secret} the retry loop stops after three attempts`;
    return answer;
  }

  return { validAnswer, answerWithStringFinding };
}

/** The contract's example diagnostics for a finding compressed into a sentence. */
export const contractDiagnostics = {
  valid: false,
  errors: [
    {
      validation_path: "/update/working_brief/findings/0",
      validation_keyword: "type",
      validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
      expected_types: ["object"],
      actual_type: "string",
      hint: "findings/0 must be an object with id, direction, text, scope, evidence_refs.",
      example: { id: "F1", direction: "supports", text: "…", scope: "…", evidence_refs: ["E000001"] },
    },
  ],
};
