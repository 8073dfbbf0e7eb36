import type { Validation } from "../../src/schema/diagnostics.js";

type Answer = Record<string, unknown> & {
  update: Record<string, unknown> & { working_brief: { findings: unknown[] } };
};

/** A valid investigation_bootstrap_v22 (and v21) answer, for the cases below to break. */
function validAnswer(): Answer {
  return {
    assessment: {
      summary: "Job N12 stalls after its third retry.",
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
            scope: "job runs of N12",
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

/** The contract's example (section 6): the first finding compressed into a sentence. */
function stringFinding(): unknown {
  const answer = validAnswer();
  answer.update.working_brief.findings[0] = "the retry loop stops after three attempts";
  return answer;
}

/** Several mistakes at once: an unknown member, a bad enum, a missing member, a wrong tagged alternative. */
function severalMistakes(): unknown {
  const answer = validAnswer();
  answer.update.working_brief.findings = [
    { id: "F1", direction: "agrees", text: "Loop stops.", scope: "N12", evidence_refs: ["E1"] },
    { id: "F2", direction: "neutral", text: "Scheduler restarts.", scope: "N12", extra_note: "x" },
  ];
  answer.next = { action: "recall", arguments: { kind: "recall", evidence_refs: [], page: -1 }, rationale: "r" };
  return answer;
}

/** An answer to a named schema, as text (the model's raw output), and the diagnostics it must get. */
export interface EdgeDiagnosticsCase {
  /** What the answer gets wrong, as a test name. */
  name: string;
  /** The named schema (`schemas/<name>.json`) it answers. */
  schema: string;
  answerText: string;
  diagnostics: Validation;
}

/**
 * Answers whose diagnostics must be identical on Node (Ajv compiling at run time) and on Workers (the validators
 * Ajv compiled at build time): the fixture that test/schema/edge-diagnostics.test.ts holds both runtimes to, and
 * that test/workers/app.test.ts and test/e2e/edge-diagnostics-node.test.ts hold the whole gateway to.
 */
export const edgeDiagnosticsCases: EdgeDiagnosticsCase[] = [
  {
    name: "a valid answer",
    schema: "investigation_bootstrap_v22",
    answerText: JSON.stringify(validAnswer()),
    diagnostics: { valid: true, errors: [] },
  },
  {
    name: "a finding given as a string",
    schema: "investigation_bootstrap_v22",
    answerText: JSON.stringify(stringFinding()),
    diagnostics: {
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
    },
  },
  {
    name: "several mistakes at once",
    schema: "investigation_bootstrap_v22",
    answerText: JSON.stringify(severalMistakes()),
    diagnostics: {
      valid: false,
      errors: [
        {
          validation_path: "/next/arguments/evidence_refs",
          validation_keyword: "minItems",
          hint: "arguments/evidence_refs must have at least 1 item.",
        },
        {
          validation_path: "/next/arguments/page",
          validation_keyword: "minimum",
          hint: "arguments/page must be at least 0.",
        },
        {
          validation_path: "/update/working_brief/findings/0/direction",
          validation_keyword: "enum",
          hint: "findings/0/direction must be one of: supports, contradicts, neutral.",
        },
        {
          validation_path: "/update/working_brief/findings/0/evidence_refs/0",
          validation_keyword: "pattern",
          hint: "evidence_refs/0 must match the pattern ^E[0-9]{6}$.",
        },
        {
          validation_path: "/update/working_brief/findings/1",
          validation_keyword: "required",
          validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
          hint: "findings/1 is missing the required property evidence_refs.",
          example: { id: "F1", direction: "supports", text: "…", scope: "…", evidence_refs: ["E000001"] },
        },
        {
          validation_path: "/update/working_brief/findings/1/*",
          validation_keyword: "additionalProperties",
          validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
          hint: "findings/1 has a property the schema does not allow; allowed: id, direction, text, scope, evidence_refs.",
        },
      ],
    },
  },
  {
    name: "a v21 answer with a finding given as a string",
    schema: "investigation_bootstrap_v21",
    answerText: JSON.stringify(stringFinding()),
    diagnostics: {
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
    },
  },
  {
    name: "output that is not JSON",
    schema: "investigation_bootstrap_v22",
    answerText: '{"assessment": {"summary": "cut off',
    diagnostics: {
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: "The answer is not valid JSON." }],
    },
  },
];

/** The text of a Gemini generateContent request's first part, where the tests below name their case. */
function firstText(requestBody: string): string | undefined {
  try {
    const body = JSON.parse(requestBody) as { contents?: { parts?: { text?: unknown }[] }[] };
    const text = body.contents?.[0]?.parts?.[0]?.text;
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a fake Gemini upstream answers a generateContent request whose prompt is a case's name: that case's answer
 * text as the model's output. Node's fake upstream and the workerd tests' outbound service both answer with it.
 */
export function geminiAnswerFor(requestBody: string): Record<string, unknown> {
  const named = edgeDiagnosticsCases.find((entry) => entry.name === firstText(requestBody));
  const text = (named ?? edgeDiagnosticsCases[0]!).answerText;
  return {
    candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 40, totalTokenCount: 52 },
    modelVersion: "gemini-test",
    responseId: "response-edge",
  };
}
