import type {
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import {
  isJsonObject,
  isNonEmptyString,
  type JsonObject,
  lastTurn,
  lastUserText,
} from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { seedFromDigest, simulatedCreatedAt } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { eventFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
import { type DeclaredTool, declaredTools, simulatedToolCall } from "../../../simulated/tool-call.js";
import { type WireResponse as OpenAIResponse, responseOf, textPart } from "../responses-via-chat/response-object.js";
import type { UnnumberedEvent } from "../responses-via-chat/stream.js";
import { toolChoiceOf } from "./chat.js";
import { type InputItem, inputItemsOf } from "./input-items.js";

const requiredFields: RequiredField[] = [{ field: "model", expected: "a non-empty string", check: isNonEmptyString }];

/** The first problem with a Responses body, if any. */
export function responsesRequestProblem(body: JsonObject): RequestProblem | undefined {
  const problem = findRequestProblem(body, requiredFields);
  if (problem !== undefined) return problem;
  const { input } = body;
  if (input !== undefined && typeof input !== "string" && !Array.isArray(input)) {
    return { kind: "invalid", field: "input", expected: "a string or an array" };
  }
  return undefined;
}

/** The stored conversation a Responses call continues, and where its own response is kept. */
export interface ResponseHistory {
  /** The `total_tokens` of the response `previous_response_id` names (0 without one): its input and output. */
  priorTokens: number;
  /**
   * Keeps the response with its input items, unless the request says `store: false`; a queued
   * background response with the completed response it becomes.
   */
  remember(response: OpenAIResponse, inputItems: InputItem[], completion?: OpenAIResponse): void;
}

const noHistory: ResponseHistory = { priorTokens: 0, remember: () => undefined };

/**
 * A simulated Responses answer: a completed `response`, or its event stream when `stream` is
 * set; with `background` (and no stream), the response at once as `queued`, completed when it is
 * first looked at. As at OpenAI, the stored history a follow-up turn continues counts in its
 * input tokens.
 */
export function simulateResponse({ body, digest }: JsonBody, history: ResponseHistory = noHistory): Response {
  const seed = seedFromDigest(digest);
  const userText = lastUserText(body.input, "content", "input_text");
  const call = simulatedToolCall({
    tools: declaredTools(body.tools, responsesTool),
    choice: toolChoiceOf(body.tool_choice),
    endsWithToolResult: lastTurn(body.input)?.type === "function_call_output",
    lastUserText: userText,
    seed,
  });
  const hex = digest.slice(0, 48);
  const item: ResponseOutputItem =
    call === undefined
      ? {
          id: `msg_${hex}`,
          type: "message",
          role: "assistant",
          status: "completed",
          content: [textPart(simulatedAnswer({ lastUserText: userText, format: answerFormat(body.text), seed }))],
        }
      : {
          id: `fc_${hex}`,
          type: "function_call",
          status: "completed",
          arguments: call.arguments,
          call_id: `call_${hex.slice(0, 24)}`,
          name: call.name,
        };
  const inputTokens = history.priorTokens + estimatePromptTokens(body.instructions, body.input, body.tools);
  const outputTokens = estimateTokens(item.type === "message" ? textOf(item) : `${call?.name}${call?.arguments}`);
  const usage: ResponseUsage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  const generated = { id: `resp_${hex}`, createdAt: simulatedCreatedAt, completedAt: simulatedCreatedAt };
  const echoed = (response: OpenAIResponse): OpenAIResponse => ({
    ...response,
    background: body.background === true,
    previous_response_id: typeof body.previous_response_id === "string" ? body.previous_response_id : null,
  });
  const model = String(body.model);
  const completed = echoed(responseOf(body, { ...generated, status: "completed", model, output: [item], usage }));
  const inputItems = inputItemsOf(body.input, digest);
  if (body.background === true && body.stream !== true) {
    const queued: OpenAIResponse = {
      ...echoed(responseOf(body, { ...generated, status: "in_progress", model, output: [] })),
      status: "queued",
    };
    if (body.store !== false) history.remember(queued, inputItems, completed);
    return Response.json(queued);
  }
  if (body.store !== false) history.remember(completed, inputItems);
  if (body.stream !== true) return Response.json(completed);
  return responseEventStream(completed, -1);
}

/** A declared function tool: `{type: "function", name, parameters}`. */
function responsesTool(tool: JsonObject): DeclaredTool | undefined {
  if (tool.type !== "function" || typeof tool.name !== "string") return undefined;
  return { name: tool.name, parameters: tool.parameters };
}

function textOf(message: ResponseOutputMessage): string {
  return message.content.map((part) => (part.type === "output_text" ? part.text : part.refusal)).join("");
}

/**
 * The event stream of a simulated response after the event numbered `startingAfter`, as a
 * create with `stream` sends it and `GET /v1/responses/{id}?stream=true&starting_after=N`
 * resumes it: a background response's starts with `response.queued`; one that never completed
 * (cancelled while queued) has only that event.
 */
export function responseEventStream(response: OpenAIResponse, startingAfter: number): Response {
  const events = responseEvents(response).filter((event) => event.sequence_number > startingAfter);
  return sseResponse(events.map((event) => eventFrame(event.type, event)));
}

function responseEvents(response: OpenAIResponse): ResponseStreamEvent[] {
  const { usage: _usage, completed_at: _completedAt, ...started } = response;
  const base: OpenAIResponse = { ...started, status: "in_progress", output: [], usage: null };
  const queued: UnnumberedEvent[] =
    response.background === true ? [{ type: "response.queued", response: { ...base, status: "queued" } }] : [];
  const item = response.output[0];
  const generated: UnnumberedEvent[] =
    response.status === "completed" && item !== undefined
      ? [
          { type: "response.created", response: base },
          { type: "response.in_progress", response: base },
          ...itemEvents(item),
          { type: "response.completed", response },
        ]
      : [];
  // Spreading a member of the union and adding its number is sound; TypeScript cannot see that through `Omit`.
  return [...queued, ...generated].map((event, index) => ({ ...event, sequence_number: index }) as ResponseStreamEvent);
}

/** The events of one output item: a message with one text part, or a function call, from added to done. */
function itemEvents(item: ResponseOutputItem): UnnumberedEvent[] {
  if (item.type === "function_call") return functionCallEvents(item as ResponseFunctionToolCall & { id: string });
  if (item.type !== "message") return [];
  const text = textOf(item);
  const at = { item_id: item.id, output_index: 0, content_index: 0 };
  return [
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.content_part.added", ...at, part: textPart("") },
    ...textDeltas(text).map(
      (delta): UnnumberedEvent => ({ type: "response.output_text.delta", ...at, delta, logprobs: [] }),
    ),
    { type: "response.output_text.done", ...at, text, logprobs: [] },
    { type: "response.content_part.done", ...at, part: textPart(text) },
    { type: "response.output_item.done", output_index: 0, item },
  ];
}

function functionCallEvents(item: ResponseFunctionToolCall & { id: string }): UnnumberedEvent[] {
  const at = { item_id: item.id, output_index: 0 };
  return [
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", arguments: "" } },
    ...textDeltas(item.arguments).map(
      (delta): UnnumberedEvent => ({ type: "response.function_call_arguments.delta", ...at, delta }),
    ),
    { type: "response.function_call_arguments.done", ...at, name: item.name, arguments: item.arguments },
    { type: "response.output_item.done", output_index: 0, item },
  ];
}

function answerFormat(text: unknown): AnswerFormat {
  if (!isJsonObject(text) || !isJsonObject(text.format)) return { kind: "text" };
  const { format } = text;
  if (format.type === "json_object") return { kind: "json-object" };
  if (format.type === "json_schema") {
    return format.schema === undefined ? { kind: "json-object" } : { kind: "json-schema", schema: format.schema };
  }
  return { kind: "text" };
}
