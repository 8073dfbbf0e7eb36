import { describe, expect, it } from "vitest";
import { messagesStructuredOutput } from "../../src/surfaces/anthropic/messages-structured-output.js";
import { geminiStructuredOutput } from "../../src/surfaces/gemini/gemini-structured-output.js";
import { chatStructuredOutput } from "../../src/surfaces/openai/chat-structured-output.js";
import { responsesStructuredOutput } from "../../src/surfaces/openai/responses-structured-output.js";

// Why a provider stopped an answer before its end, read from each surface's own members: the reason the diagnostics
// of a cut answer name. An answer that ended as it should, or a body without the member, has none.

describe("stopReason", () => {
  it("reads Chat Completions' finish_reason per choice: length and content_filter stop early", () => {
    const body = {
      choices: [{ finish_reason: "stop" }, { finish_reason: "length" }, { finish_reason: "content_filter" }, {}],
    };
    expect([0, 1, 2, 3, 4].map((index) => chatStructuredOutput.stopReason(body, index))).toEqual([
      undefined,
      "length",
      "content_filter",
      undefined,
      undefined,
    ]);
    expect(chatStructuredOutput.stopReason({ choices: [{ finish_reason: "tool_calls" }] }, 0)).toBeUndefined();
  });

  it("reads a Responses answer's status and incomplete_details", () => {
    const incomplete = { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
    expect(responsesStructuredOutput.stopReason(incomplete, 0)).toBe("max_output_tokens");
    expect(responsesStructuredOutput.stopReason({ status: "incomplete" }, 0)).toBe("incomplete");
    expect(responsesStructuredOutput.stopReason({ status: "completed" }, 0)).toBeUndefined();
  });

  it("reads Gemini's finishReason per candidate: every reason but STOP stops early", () => {
    const body = {
      candidates: [
        { finishReason: "STOP" },
        { finishReason: "MAX_TOKENS" },
        { finishReason: "SAFETY" },
        { finishReason: "RECITATION" },
        { finishReason: "FINISH_REASON_UNSPECIFIED" },
        {},
      ],
    };
    expect([0, 1, 2, 3, 4, 5].map((index) => geminiStructuredOutput.stopReason(body, index))).toEqual([
      undefined,
      "MAX_TOKENS",
      "SAFETY",
      "RECITATION",
      undefined,
      undefined,
    ]);
  });

  it("reads Anthropic's stop_reason: max_tokens, refusal and a full context window stop early", () => {
    for (const reason of ["max_tokens", "refusal", "model_context_window_exceeded"]) {
      expect(messagesStructuredOutput.stopReason({ stop_reason: reason }, 0)).toBe(reason);
    }
    for (const reason of ["end_turn", "stop_sequence", "tool_use", null]) {
      expect(messagesStructuredOutput.stopReason({ stop_reason: reason }, 0)).toBeUndefined();
    }
  });
});

describe("usage", () => {
  it("reads each surface's token counts, whole and from the stream events that carry them", () => {
    expect(chatStructuredOutput.usage({ usage: { prompt_tokens: 10, completion_tokens: 3 } })).toEqual({
      input: 10,
      output: 3,
    });
    expect(responsesStructuredOutput.usage({ usage: { input_tokens: 7, output_tokens: 2 } })).toEqual({
      input: 7,
      output: 2,
    });
    expect(
      responsesStructuredOutput.usage({
        type: "response.completed",
        response: { usage: { input_tokens: 7, output_tokens: 4 } },
      }),
    ).toEqual({ input: 7, output: 4 });
    expect(geminiStructuredOutput.usage({ usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1 } })).toEqual({
      input: 9,
      output: 1,
    });
    expect(messagesStructuredOutput.usage({ usage: { input_tokens: 5, output_tokens: 8 } })).toEqual({
      input: 5,
      output: 8,
    });
    expect(
      messagesStructuredOutput.usage({
        type: "message_start",
        message: { usage: { input_tokens: 5, output_tokens: 1 } },
      }),
    ).toEqual({ input: 5, output: 1 });
    expect(messagesStructuredOutput.usage({ type: "message_delta", usage: { output_tokens: 40 } })).toEqual({
      output: 40,
    });
    for (const output of [
      chatStructuredOutput,
      responsesStructuredOutput,
      geminiStructuredOutput,
      messagesStructuredOutput,
    ]) {
      expect(output.usage({})).toBeUndefined();
      expect(output.usage({ usage: { prompt_tokens: -1, input_tokens: "many" } })).toBeUndefined();
    }
  });
});

describe("responseFacts", () => {
  it("reads each surface's response id and finish reasons, whole and from stream events", () => {
    expect(
      chatStructuredOutput.responseFacts({
        id: "chatcmpl-1",
        choices: [{ finish_reason: "stop" }, { finish_reason: "length" }],
      }),
    ).toEqual({ id: "chatcmpl-1", finishReasons: ["stop", "length"] });
    expect(chatStructuredOutput.responseFacts({ id: "chatcmpl-1", choices: [{ finish_reason: null }] })).toEqual({
      id: "chatcmpl-1",
    });
    expect(responsesStructuredOutput.responseFacts({ id: "resp_1", status: "completed" })).toEqual({
      id: "resp_1",
      finishReasons: ["completed"],
    });
    expect(
      responsesStructuredOutput.responseFacts({
        type: "response.created",
        response: { id: "resp_2", status: "in_progress" },
      }),
    ).toEqual({ id: "resp_2" });
    expect(
      geminiStructuredOutput.responseFacts({ responseId: "g-1", candidates: [{ finishReason: "MAX_TOKENS" }] }),
    ).toEqual({ id: "g-1", finishReasons: ["MAX_TOKENS"] });
    expect(messagesStructuredOutput.responseFacts({ id: "msg_1", stop_reason: "end_turn" })).toEqual({
      id: "msg_1",
      finishReasons: ["end_turn"],
    });
    expect(messagesStructuredOutput.responseFacts({ type: "message_start", message: { id: "msg_2" } })).toEqual({
      id: "msg_2",
    });
    expect(
      messagesStructuredOutput.responseFacts({ type: "message_delta", delta: { stop_reason: "max_tokens" } }),
    ).toEqual({
      finishReasons: ["max_tokens"],
    });
  });
});
