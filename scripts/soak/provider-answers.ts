import { unionChainFailingAnswer } from "./schemas.js";

/** The three providers' answers as the soak's fake upstream sends them, plain and streamed. */
export type SurfaceName = "openai" | "gemini" | "anthropic";

/** The surface an upstream request path belongs to. */
export function surfaceOf(url: string): SurfaceName {
  if (url.startsWith("/gemini")) return "gemini";
  if (url.startsWith("/anthropic")) return "anthropic";
  return "openai";
}

/** The depth of the union chain whose call is answered with text that fails it. */
export const unionChainDepth = 8;

/**
 * The text of a successful answer, chosen by a mark in the request: a structured-output call gets `{}`, which every
 * large schema of the soak accepts (nothing is required at the top); a union-chain call gets an answer that fails its
 * schema on every path; any other call gets `ok`.
 */
export function answerText(requestBody: string): string {
  if (requestBody.includes("UNION-CHAIN-CALL")) return unionChainFailingAnswer(unionChainDepth);
  if (requestBody.includes("SCHEMA-CALL")) return "{}";
  return "ok";
}

/** An Anthropic message: whole with its content and stop reason, or the opening of a stream's. */
function anthropicMessage(content: unknown[], stopReason: string | null) {
  const message = { id: "msg_soak", type: "message", role: "assistant", model: "claude-test" };
  return {
    ...message,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** A whole (non-streamed) successful answer whose text is `text`. */
export function wholeAnswer(surface: SurfaceName, text: string): string {
  if (surface === "gemini")
    return JSON.stringify({
      candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
    });
  if (surface === "anthropic") return JSON.stringify(anthropicMessage([{ type: "text", text }], "end_turn"));
  return JSON.stringify({
    id: "chatcmpl-soak",
    object: "chat.completion",
    model: "gpt-test",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
  });
}

/** A streamed answer: its opening and text events (one per delta), and the final event(s) that end it. */
export interface StreamedAnswer {
  events: string[];
  final: string;
}

const sse = (data: unknown, event?: string) =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;

/** The provider's native server-sent events for an answer made of `deltas`. */
export function streamedAnswer(surface: SurfaceName, deltas: readonly string[]): StreamedAnswer {
  if (surface === "gemini") {
    // Gemini ends with the chunk that carries finishReason; its events end in CRLF CRLF.
    const chunk = (value: unknown) => `data: ${JSON.stringify(value)}\r\n\r\n`;
    return {
      events: deltas.map((text) =>
        chunk({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }] }),
      ),
      final: chunk({
        candidates: [{ content: { role: "model", parts: [{ text: "." }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: {
          promptTokenCount: 1,
          candidatesTokenCount: deltas.length + 1,
          totalTokenCount: deltas.length + 2,
        },
      }),
    };
  }
  if (surface === "anthropic") {
    const start = sse({ type: "message_start", message: anthropicMessage([], null) }, "message_start");
    const blockStart = sse(
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      "content_block_start",
    );
    const textEvents = deltas.map((text) =>
      sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta"),
    );
    return {
      events: [start + blockStart, ...textEvents],
      final:
        sse({ type: "content_block_stop", index: 0 }, "content_block_stop") +
        sse(
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: deltas.length },
          },
          "message_delta",
        ) +
        sse({ type: "message_stop" }, "message_stop"),
    };
  }
  const chunk = (delta: unknown, finish: string | null) =>
    sse({
      id: "chatcmpl-soak",
      object: "chat.completion.chunk",
      model: "gpt-test",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  return {
    events: deltas.map((content, index) => chunk(index === 0 ? { role: "assistant", content } : { content }, null)),
    final: `${chunk({}, "stop")}data: [DONE]\n\n`,
  };
}

/** Whether `text` holds the final event of a surface's stream: a client that saw it holds the whole answer. */
export function hasFinalEvent(surface: SurfaceName, text: string): boolean {
  if (surface === "gemini") return text.includes('"finishReason"');
  if (surface === "anthropic") return text.includes("event: message_stop");
  return text.includes("data: [DONE]");
}

/** Whether a relayed stream carries an error event (the gateway's native one or a provider's). */
export function hasErrorEvent(text: string): boolean {
  return /^event: error$/m.test(text) || /^data: \{"error"/m.test(text) || text.includes('"promptgate"');
}
