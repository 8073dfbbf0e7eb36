import { createParser, type EventSourceMessage } from "eventsource-parser";
import { jsonObjectOf } from "../json/json-object-of.js";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";
import { eventSplitter } from "./sse-events.js";

/** What a stream's observer is told. */
export interface StreamObserver {
  /** Each event of the stream whose data is a JSON object, in order (error events excepted). */
  onEvent(event: JsonObject): void;
  /**
   * Exactly once: `complete` when the stream ended normally; false when it broke off, carried
   * an error event or was cancelled by the client (`cancelled`).
   */
  onEnd(complete: boolean, cancelled: boolean): void;
}

/** How a relayed stream's failures reach the client. */
export interface StreamFailures {
  /**
   * The text that replaces an error event the provider sent inside the stream (`data` is the
   * event's data), or undefined to relay the event as it came.
   */
  replaceErrorEvent(data: string): string | undefined;
  /** The native error event that ends the client's stream when the provider's broke off. */
  breakOff(cause: unknown): string;
}

/**
 * Relays a provider's stream as it arrives while an observer reads its events. Server-sent
 * events pass event by event, byte for byte, except an error event of the provider's, which is
 * replaced by the gateway's native one, and a stream that breaks off, which ends with the
 * native error event instead of silently (an incomplete last event is dropped, so that the
 * error event parses on its own). A JSON-array stream (Gemini without `alt=sse`) passes chunk
 * by chunk and is read whole at its end; it cannot carry an error event, so it breaks off.
 */
export function relayStream(
  stream: ReadableStream<Uint8Array>,
  contentType: string,
  observer: StreamObserver,
  failures: StreamFailures,
): ReadableStream<Uint8Array> {
  const sse = contentType.includes("text/event-stream");
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const splitter = eventSplitter();
  const reader = stream.getReader();
  let parsed: EventSourceMessage | undefined;
  const parser = createParser({
    onEvent(event) {
      parsed = event;
    },
  });
  let whole = "";
  let failed = false;
  let ended = false;
  const end = (complete: boolean, cancelled: boolean) => {
    if (ended) return;
    ended = true;
    observer.onEnd(complete && !failed, cancelled);
  };

  /** The events of `text` as they go to the client. */
  const relayEvents = (text: string): string => {
    let out = "";
    for (const raw of splitter.push(text)) {
      parsed = undefined;
      parser.feed(raw);
      const event = parsed as EventSourceMessage | undefined;
      if (event === undefined) {
        out += raw;
        continue;
      }
      const data = jsonObjectOf(event.data);
      if (event.event === "error" || isObject(data?.error)) {
        failed = true;
        out += failures.replaceErrorEvent(event.data) ?? raw;
        continue;
      }
      if (data !== undefined) observer.onEvent(data);
      out += raw;
    }
    return out;
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Reads until there is something to pass on: a pull that enqueues nothing is not called again.
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (cause) {
          // After an error event of the provider's, the stream has told its failure already.
          const told = failed;
          failed = true;
          end(false, false);
          if (!sse) {
            controller.error(cause);
            return;
          }
          splitter.rest();
          if (!told) controller.enqueue(encoder.encode(failures.breakOff(cause)));
          controller.close();
          return;
        }
        if (chunk.done) {
          const rest = decoder.decode();
          if (sse) {
            const last = relayEvents(rest) + splitter.rest();
            if (last !== "") controller.enqueue(encoder.encode(last));
          } else {
            readArray(whole + rest, observer);
          }
          end(true, false);
          controller.close();
          return;
        }
        if (!sse) {
          whole += decoder.decode(chunk.value, { stream: true });
          controller.enqueue(chunk.value);
          return;
        }
        const out = relayEvents(decoder.decode(chunk.value, { stream: true }));
        if (out !== "") {
          controller.enqueue(encoder.encode(out));
          return;
        }
      }
    },
    cancel(reason) {
      end(false, true);
      return reader.cancel(reason);
    },
  });
}

function readArray(text: string, observer: StreamObserver): void {
  try {
    const values: unknown = JSON.parse(text);
    if (Array.isArray(values)) for (const value of values) if (isObject(value)) observer.onEvent(value);
  } catch {
    // Not a JSON array: nothing to observe.
  }
}
