import { createParser } from "eventsource-parser";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";

/** What a stream's observer is told. */
export interface StreamObserver {
  /** Each event of the stream whose data is a JSON object, in order. */
  onEvent(event: JsonObject): void;
  /** Exactly once: `complete` when the stream ended normally, false when it broke off or was cancelled. */
  onEnd(complete: boolean): void;
}

/**
 * Passes a stream through unchanged, chunk by chunk as it arrives, while an observer reads
 * its events. Server-sent events are read event by event; a JSON-array stream (Gemini
 * without `alt=sse`) is read whole at its end.
 */
export function observeStream(
  stream: ReadableStream<Uint8Array>,
  contentType: string,
  observer: StreamObserver,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const sse = contentType.includes("text/event-stream");
  const reader = stream.getReader();
  let whole = "";
  let ended = false;
  const end = (complete: boolean) => {
    if (ended) return;
    ended = true;
    observer.onEnd(complete);
  };
  const parser = createParser({
    onEvent(event) {
      const data = parseObject(event.data);
      if (data !== undefined) observer.onEvent(data);
    },
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        end(false);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        if (!sse) readArray(whole + decoder.decode(), observer);
        end(true);
        controller.close();
        return;
      }
      controller.enqueue(chunk.value);
      const text = decoder.decode(chunk.value, { stream: true });
      if (sse) parser.feed(text);
      else whole += text;
    },
    cancel(reason) {
      end(false);
      return reader.cancel(reason);
    },
  });
}

function parseObject(data: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function readArray(text: string, observer: StreamObserver): void {
  try {
    const values: unknown = JSON.parse(text);
    if (Array.isArray(values)) for (const value of values) if (isObject(value)) observer.onEvent(value);
  } catch {
    // Not a JSON array: nothing to observe.
  }
}
