import type {
  Response as OpenAIResponse,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import { isJsonObject, isNonEmptyString, type JsonObject, lastUserText } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { seedFromDigest, simulatedCreatedAt } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { eventFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
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

/** A response object as the API sends it, with the `store` flag of its request. */
type StoredFlag<T> = T & { store: boolean };

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
  const text = simulatedAnswer({
    lastUserText: lastUserText(body.input, "content", "input_text"),
    format: answerFormat(body.text),
    seed: seedFromDigest(digest),
  });
  const inputTokens = history.priorTokens + estimatePromptTokens(body.instructions, body.input, body.tools);
  const outputTokens = estimateTokens(text);
  const usage: ResponseUsage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  const messageId = `msg_sim${digest.slice(0, 40)}`;
  const part: ResponseOutputText = { type: "output_text", text, annotations: [] };
  const message: ResponseOutputMessage = {
    id: messageId,
    type: "message",
    role: "assistant",
    status: "completed",
    content: [part],
  };
  // The API echoes `store` in every response object, though the SDK's type does not declare it.
  const base: StoredFlag<OpenAIResponse> = {
    id: `resp_sim${digest.slice(0, 40)}`,
    object: "response",
    created_at: simulatedCreatedAt,
    status: "in_progress",
    model: String(body.model),
    output: [],
    output_text: "",
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === "string" ? body.instructions : null,
    metadata: null,
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: "auto",
    tools: [],
    top_p: null,
    previous_response_id: typeof body.previous_response_id === "string" ? body.previous_response_id : null,
    background: body.background === true,
    store: body.store !== false,
  };
  const completed: StoredFlag<OpenAIResponse> = {
    ...base,
    status: "completed",
    completed_at: simulatedCreatedAt,
    output: [message],
    output_text: text,
    usage,
  };
  const inputItems = inputItemsOf(body.input, digest);
  if (body.background === true && body.stream !== true) {
    const queued: StoredFlag<OpenAIResponse> = { ...base, status: "queued" };
    if (body.store !== false) history.remember(queued, inputItems, completed);
    return Response.json(queued);
  }
  if (body.store !== false) history.remember(completed, inputItems);
  if (body.stream !== true) return Response.json(completed);
  return responseEventStream(completed, -1);
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
  const base: OpenAIResponse = { ...started, status: "in_progress", output: [], output_text: "" };
  const queued: UnnumberedEvent[] =
    response.background === true ? [{ type: "response.queued", response: { ...base, status: "queued" } }] : [];
  const message = response.output[0];
  const generated =
    response.status === "completed" && message?.type === "message" ? generationEvents(base, response, message) : [];
  // Spreading a member of the union and adding its number is sound; TypeScript cannot see that through `Omit`.
  return [...queued, ...generated].map((event, index) => ({ ...event, sequence_number: index }) as ResponseStreamEvent);
}

type UnnumberedEvent = ResponseStreamEvent extends infer Event
  ? Event extends ResponseStreamEvent
    ? Omit<Event, "sequence_number">
    : never
  : never;

/** The Responses event sequence for one message with one text part, not yet numbered. */
function generationEvents(
  base: OpenAIResponse,
  completed: OpenAIResponse,
  message: ResponseOutputMessage,
): UnnumberedEvent[] {
  const text = completed.output_text;
  const part: ResponseOutputText = { type: "output_text", text, annotations: [] };
  const at = { item_id: message.id, output_index: 0, content_index: 0 };
  const events: UnnumberedEvent[] = [
    { type: "response.created", response: base },
    { type: "response.in_progress", response: base },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...message, status: "in_progress", content: [] },
    },
    { type: "response.content_part.added", ...at, part: { ...part, text: "" } },
    ...textDeltas(text).map(
      (delta): UnnumberedEvent => ({ type: "response.output_text.delta", ...at, delta, logprobs: [] }),
    ),
    { type: "response.output_text.done", ...at, text, logprobs: [] },
    { type: "response.content_part.done", ...at, part },
    { type: "response.output_item.done", output_index: 0, item: message },
    { type: "response.completed", response: completed },
  ];
  return events;
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
