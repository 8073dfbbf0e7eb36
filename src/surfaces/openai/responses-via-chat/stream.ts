/*
 * A streamed translated answer (`chat.completion.chunk` objects) as Responses stream events,
 * numbered from 0, from `response.created` through `response.completed` or `response.incomplete`.
 */

import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputRefusal,
  ResponseOutputText,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import {
  itemId,
  numberOr,
  type Outcome,
  outcomeOf,
  refusalPart,
  responseOf,
  seconds,
  stringOr,
  textPart,
  usageOf,
  type WireResponse,
} from "./response-object.js";

/** A stream event before it is numbered; the events that carry the response carry it as sent. */
export type UnnumberedEvent =
  | (ResponseStreamEvent extends infer Event
      ? Event extends ResponseStreamEvent
        ? Event extends { response: Response }
          ? never
          : Omit<Event, "sequence_number">
        : never
      : never)
  | {
      type:
        | "response.queued"
        | "response.created"
        | "response.in_progress"
        | "response.completed"
        | "response.incomplete";
      response: WireResponse;
    };

/** A content part being streamed: output text or a refusal, and what of it arrived. */
interface OpenPart {
  kind: "text" | "refusal";
  text: string;
}

/** The message item being streamed: its finished parts and its open one. */
interface OpenMessage {
  kind: "message";
  id: string;
  outputIndex: number;
  parts: (ResponseOutputText | ResponseOutputRefusal)[];
  part?: OpenPart | undefined;
}

/** Where a content part sits: its item, the item's place in the output, its own in the item. */
interface PartPlace {
  item_id: string;
  output_index: number;
  content_index: number;
}

function placeOf(message: OpenMessage): PartPlace {
  return { item_id: message.id, output_index: message.outputIndex, content_index: message.parts.length };
}

/** The function call being streamed, with the index Chat Completions gives it. */
interface OpenCall {
  kind: "call";
  index: number;
  outputIndex: number;
  item: ResponseFunctionToolCall & { id: string };
}

/** Turns `chat.completion.chunk` objects into Responses stream events, in order. */
export interface ResponsesStreamTranslator {
  /** The events one chunk becomes (the opening events come with the first). */
  chunk(chunk: JsonObject): JsonObject[];
  /** The closing events, through `response.completed` or `response.incomplete`, once the chat stream ended. */
  end(): JsonObject[];
}

/**
 * A translator of one streamed answer to Responses events, numbered from 0. Each output item is
 * closed before the next opens, as the API streams them: text then tool calls give the output
 * `chatToResponse` gives for the whole answer. Tool calls arrive one after another, as Chat
 * Completions streams them; a chunk that returns to a closed call is a fault of the translation
 * before and throws.
 */
export function chatStreamToResponses(
  request: JsonObject,
  id: string,
  createdAt: number,
  clock: () => number = Date.now,
): ResponsesStreamTranslator {
  let sequence = 0;
  let pending: JsonObject[] = [];
  let started = false;
  let model = String(request.model);
  let open: OpenMessage | OpenCall | undefined;
  let finishReason: unknown;
  let usage: ResponseUsage | undefined;
  const output: ResponseOutputItem[] = [];
  const closedCalls = new Set<number>();

  const emit = (event: UnnumberedEvent): void => {
    pending.push({ ...event, sequence_number: sequence++ });
  };
  const drain = (): JsonObject[] => {
    const events = pending;
    pending = [];
    return events;
  };
  const snapshot = (outcome: Outcome, items: ResponseOutputItem[]): WireResponse =>
    responseOf(request, {
      ...outcome,
      id,
      createdAt,
      completedAt: seconds(clock),
      model,
      output: items,
      usage: outcome.status === "in_progress" ? undefined : usage,
    });

  const start = (): void => {
    if (started) return;
    started = true;
    const response = snapshot({ status: "in_progress" }, []);
    emit({ type: "response.created", response });
    emit({ type: "response.in_progress", response });
  };

  const closePart = (message: OpenMessage): void => {
    const { part } = message;
    if (part === undefined) return;
    const at = placeOf(message);
    const done = part.kind === "text" ? textPart(part.text) : refusalPart(part.text);
    if (part.kind === "text") emit({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
    else emit({ type: "response.refusal.done", ...at, refusal: part.text });
    emit({ type: "response.content_part.done", ...at, part: done });
    message.parts.push(done);
    message.part = undefined;
  };

  const close = (status: "completed" | "incomplete"): void => {
    const item = open;
    if (item === undefined) return;
    let done: ResponseOutputItem;
    if (item.kind === "message") {
      closePart(item);
      done = { id: item.id, type: "message", status, role: "assistant", content: item.parts };
    } else {
      const { id: itemId, name, arguments: args } = item.item;
      emit({
        type: "response.function_call_arguments.done",
        item_id: itemId,
        output_index: item.outputIndex,
        name,
        arguments: args,
      });
      done = { ...item.item, status };
      closedCalls.add(item.index);
    }
    emit({ type: "response.output_item.done", output_index: item.outputIndex, item: done });
    output.push(done);
    open = undefined;
  };

  /** The open content part of `kind`, opening a message item and the part as needed. */
  const openPart = (kind: OpenPart["kind"]): { part: OpenPart; place: PartPlace } => {
    if (open?.kind !== "message") {
      close("completed");
      const outputIndex = output.length;
      const message: OpenMessage = { kind: "message", id: itemId("msg", id, outputIndex), outputIndex, parts: [] };
      emit({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { id: message.id, type: "message", status: "in_progress", role: "assistant", content: [] },
      });
      open = message;
    }
    const message = open;
    if (message.part?.kind !== kind) {
      closePart(message);
      emit({
        type: "response.content_part.added",
        ...placeOf(message),
        part: kind === "text" ? textPart("") : refusalPart(""),
      });
    }
    message.part = message.part?.kind === kind ? message.part : { kind, text: "" };
    return { part: message.part, place: placeOf(message) };
  };

  const addText = (delta: string): void => {
    const { part, place } = openPart("text");
    part.text += delta;
    emit({ type: "response.output_text.delta", ...place, delta, logprobs: [] });
  };

  const addRefusal = (delta: string): void => {
    const { part, place } = openPart("refusal");
    part.text += delta;
    emit({ type: "response.refusal.delta", ...place, delta });
  };

  const addToolCall = (value: unknown): void => {
    if (!isObject(value)) return;
    const index = numberOr(value.index, 0);
    const fn = isObject(value.function) ? value.function : {};
    if (open?.kind !== "call" || open.index !== index) {
      if (closedCalls.has(index)) {
        throw new Error(`The chat stream returned to tool call ${index} after the next began.`);
      }
      close("completed");
      const outputIndex = output.length;
      const item = {
        type: "function_call" as const,
        id: itemId("fc", id, outputIndex),
        call_id: stringOr(value.id, ""),
        name: stringOr(fn.name, ""),
        arguments: "",
        status: "in_progress" as const,
      };
      emit({ type: "response.output_item.added", output_index: outputIndex, item });
      open = { kind: "call", index, outputIndex, item: { ...item } };
    }
    const call = open;
    const delta = stringOr(fn.arguments, "");
    if (delta === "") return;
    call.item.arguments += delta;
    emit({
      type: "response.function_call_arguments.delta",
      item_id: call.item.id,
      output_index: call.outputIndex,
      delta,
    });
  };

  return {
    chunk(chunk) {
      if (!started && typeof chunk.model === "string") model = chunk.model;
      start();
      const choice = (Array.isArray(chunk.choices) ? chunk.choices : []).find(isObject);
      const delta = isObject(choice?.delta) ? choice.delta : {};
      if (typeof delta.content === "string" && delta.content !== "") addText(delta.content);
      if (typeof delta.refusal === "string" && delta.refusal !== "") addRefusal(delta.refusal);
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) addToolCall(call);
      if (choice?.finish_reason != null) finishReason = choice.finish_reason;
      if (isObject(chunk.usage)) usage = usageOf(chunk.usage);
      return drain();
    },
    end() {
      start();
      const outcome = outcomeOf(finishReason);
      close(outcome.status === "incomplete" ? "incomplete" : "completed");
      const response = snapshot(outcome, output);
      emit({ type: outcome.status === "incomplete" ? "response.incomplete" : "response.completed", response });
      return drain();
    },
  };
}
