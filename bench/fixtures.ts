import { readFileSync } from "node:fs";

/** The investigation schema every benchmark call carries (about 4.3 KB as compact JSON). */
export const investigationSchema: Record<string, unknown> = JSON.parse(
  readFileSync(new URL("../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
);

/** The policy prefix and route of the realistic call. */
export const gatewayPath = "/policies/investigation.bounded/openai/v1/chat/completions";

/** The route below an OpenAI-compatible base URL, as the fake upstream, the bare proxy and Portkey serve it. */
export const openaiPath = "/v1/chat/completions";

const words = [
  "timeout",
  "checkout",
  "service",
  "latency",
  "p99",
  "retry",
  "queue",
  "worker",
  "deploy",
  "rollback",
  "database",
  "connection",
  "pool",
  "exhausted",
  "upstream",
  "gateway",
  "request",
  "error",
  "rate",
  "spike",
  "région",
  "café",
  "naïve",
  "evidence",
  "E000123",
  "N12",
  "shows",
  "after",
  "before",
  "the",
  "a",
  "of",
  "in",
  "—",
];

/** Deterministic prose of exactly `length` code points (no surrogate pairs, a few non-ASCII letters). */
export function prose(length: number, seed = 1): string {
  let state = seed >>> 0 || 1;
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    // xorshift32: the same text on every run, so every run measures the same bytes.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const word = words[(state >>> 0) % words.length] ?? "the";
    const piece = (state & 15) === 0 ? `${word}. ` : `${word} `;
    parts.push(piece);
    size += piece.length;
  }
  return parts.join("").slice(0, length);
}

/** One finding of the v22 answer with a text of `textLength` characters. */
function finding(index: number, textLength: number): Record<string, unknown> {
  return {
    id: `F${index + 1}`,
    direction: index % 3 === 0 ? "supports" : index % 3 === 1 ? "neutral" : "contradicts",
    text: prose(textLength, 100 + index),
    scope: prose(120, 200 + index),
    evidence_refs: [`E00012${index % 10}`, `E00034${index % 10}`],
  };
}

/** A valid answer to the v22 schema with `findings` findings of `textLength` characters each. */
export function investigationAnswer(findings: number, textLength: number): Record<string, unknown> {
  return {
    assessment: {
      summary: prose(600, 7),
      confidence: "medium",
      hypothesis_status: "supported",
      entity_refs: ["N12", "N40"],
    },
    update: {
      working_brief: {
        findings: Array.from({ length: findings }, (_, index) => finding(index, textLength)),
        open_questions: [prose(150, 11), prose(150, 12)],
      },
      retired: ["F0"],
      next_step: { intent: prose(200, 13), expected_signal: prose(200, 14) },
    },
    next: {
      action: "tool/project.query",
      arguments: { kind: "sql", query: "select status, count(*) from checkout_requests group by 1", limit: 100 },
      rationale: prose(300, 15),
    },
  };
}

/** The answer text of about `bytes` bytes: 12 findings whose texts grow until the answer reaches the size. */
export function investigationAnswerText(bytes: number): string {
  let text = JSON.stringify(investigationAnswer(12, 1));
  for (let length = 1; length <= 600 && Buffer.byteLength(text) < bytes; length += 1) {
    text = JSON.stringify(investigationAnswer(12, length));
  }
  return text;
}

/** An OpenAI chat completion whose message content is `answerText`. */
export function chatCompletion(answerText: string): Record<string, unknown> {
  return {
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_767_225_600,
    model: "gpt-bench",
    choices: [{ index: 0, message: { role: "assistant", content: answerText, refusal: null }, finish_reason: "stop" }],
    usage: { prompt_tokens: 4_600, completion_tokens: 500, total_tokens: 5_100 },
  };
}

/**
 * A Chat Completions body whose messages hold `messageChars` code points in all, split into a
 * system prompt and alternating user and assistant turns of at most `turnChars`, with the v22
 * schema in `response_format.json_schema`.
 */
export function chatRequest(messageChars: number, turnChars = 4_000): Record<string, unknown> {
  const systemChars = Math.min(1_500, messageChars);
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: prose(systemChars, 3) }];
  let left = messageChars - systemChars;
  for (let turn = 0; left > 0; turn++) {
    const chars = Math.min(turnChars, left);
    messages.push({ role: turn % 2 === 0 ? "user" : "assistant", content: prose(chars, 1_000 + turn) });
    left -= chars;
  }
  return {
    model: "gpt-bench",
    messages,
    temperature: 0.2,
    response_format: {
      type: "json_schema",
      json_schema: { name: "investigation_bootstrap_v22", schema: investigationSchema },
    },
  };
}

/**
 * The realistic call of the load test: 14,000 code points of messages and the v22 schema (4,309 as
 * compact JSON), so total 18,309 + reserve 1,500 = 19,809 stays under the policy's 20,000 limit.
 */
export const realisticMessageChars = 14_000;

/** A Chat Completions body of about `bytes` bytes (same shape as the realistic call, more turns). */
export function chatRequestOfBytes(bytes: number): Uint8Array<ArrayBuffer> {
  const schemaBytes = Buffer.byteLength(JSON.stringify(investigationSchema));
  // The prose is about 1.03 bytes per code point; one correction step then lands within 0.3 %.
  let chars = Math.max(1_000, Math.round((bytes - schemaBytes - 400) / 1.03));
  let encoded = new TextEncoder().encode(JSON.stringify(chatRequest(chars, 8_000)));
  chars = Math.round(chars * (bytes / encoded.byteLength));
  encoded = new TextEncoder().encode(JSON.stringify(chatRequest(chars, 8_000)));
  return encoded as Uint8Array<ArrayBuffer>;
}
