import { createParser, type EventSourceMessage } from "eventsource-parser";
import { eventSplitter } from "../http/sse-events.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { Surface } from "../surfaces/surface.js";

/** What a stream's observer is told. */
export interface StreamObserver {
  /** Each event of the stream whose data is a JSON object, in order (error events excepted). */
  onEvent(event: JsonObject): void;
  /**
   * Exactly once: `complete` when the stream ended normally and every event was observed; false when
   * it broke off, carried an error event, was cancelled by the client (`cancelled`) or an event could
   * not be observed. The stream's last bytes and its end reach the client only once the returned
   * promise settles: a client that holds the whole stream can rely on what the observer keeps.
   */
  onEnd(complete: boolean, cancelled: boolean): Promise<void> | void;
  /**
   * Whether an event (its data, and that data parsed where it is a JSON object) is the last of the stream by the
   * surface's protocol: the stream ends there.
   */
  endsStream(data: string, event: JsonObject | undefined): boolean;
  /**
   * Whether an event (its data) marks the stream complete by the surface's protocol, though more may follow; absent
   * where the protocol marks neither (the close ends the stream). A stream that closes before its last event, or
   * before such an event, broke off.
   */
  completesStream?(data: string, event: JsonObject | undefined): boolean;
}

/** How a surface's protocol ends and completes its streams, as a stream's observer reads them. */
export function streamProtocol(surface: Pick<Surface, "endsStream" | "completesStream">) {
  const { endsStream, completesStream } = surface;
  return {
    endsStream: (data: string, event: JsonObject | undefined) => endsStream?.(data, event) ?? false,
    ...(endsStream === undefined && completesStream === undefined
      ? {}
      : {
          completesStream: (data: string, event: JsonObject | undefined) => completesStream?.(data, event) ?? false,
        }),
  };
}

/** A stream that closed before its protocol's last event: broken off, though the connection ended cleanly. */
class StreamClosedEarly extends Error {
  override readonly name = "StreamClosedEarly";
  readonly code = "STREAM_CLOSED_EARLY";
}

/** How a relayed stream's failures reach the client, and the gateway's own reach the caller. */
export interface StreamFailures {
  /**
   * The text that replaces an error event the provider sent inside the stream (`data` is the
   * event's data), or undefined to relay the event as it came. A replaced event ends the stream.
   */
  replaceErrorEvent(data: string): string | undefined;
  /**
   * The native error event that ends the client's stream when the provider's broke off; told before
   * the observer's end. A JSON-array stream cannot carry it, but it is asked all the same, for the record.
   */
  breakOff(cause: unknown): string;
  /** A failure of the gateway's own (an observer that threw); the client's stream goes on as the provider sent it. */
  internal(cause: unknown): void;
}

/**
 * Relays a provider's stream as it arrives while an observer reads its events. Server-sent
 * events pass event by event, byte for byte, except an error event of the provider's, which is
 * replaced by the gateway's native one and ends the stream, and a stream that breaks off, which
 * ends with the native error event instead of silently (an incomplete last event is dropped, so
 * that the error event parses on its own). A JSON-array stream (Gemini without `alt=sse`) passes
 * chunk by chunk and is read whole at its end; it cannot carry an error event, so it breaks off.
 *
 * What was read last is held until the stream is known to go on, or, at its end, until the
 * observer's end has settled (the call's record is kept), as a whole answer is: a client that has
 * read the final event holds an answer whose record a crash cannot lose. The stream ends at the
 * event the surface's protocol ends it with (`observer.endsStream`), whether or not the provider
 * closes its side then; what might follow is not read. Where the protocol has no such event, whether
 * the stream goes on is learnt by waiting one turn of the event loop for the next read (a provider
 * ends its stream together with its final event); that costs one turn per read, nothing more.
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
  /** The provider told a failure: an error event, or a break. */
  let failed = false;
  /** An event could not be observed: what the observer keeps of the stream is incomplete. */
  let unobserved = false;
  /** An error event was replaced: nothing after it is relayed. */
  let stopped = false;
  /** The protocol's last event was read: the stream ends with it. */
  let last = false;
  /** An event marked the stream complete, or its protocol marks nothing: a close ends it whole. */
  let completed = observer.completesStream === undefined;
  let ended = false;
  let cancelled = false;
  /** The read after the last one, started early to learn whether the stream ends there. */
  let nextRead: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  /** What was read last and not yet passed on. */
  let held: Uint8Array | undefined;

  const observe = (event: JsonObject) => {
    if (unobserved) return;
    try {
      observer.onEvent(event);
    } catch (cause) {
      // The observation is lost from here on (its answer, its final response), not the client's stream.
      unobserved = true;
      failures.internal(cause);
    }
  };

  const end = async (complete: boolean, cancel: boolean) => {
    if (ended) return;
    ended = true;
    try {
      await observer.onEnd(complete && !failed && !unobserved, cancel);
    } catch (cause) {
      failures.internal(cause);
    }
  };

  /** The events of `text` as they go to the client; none after a replaced error event. */
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
        const replacement = failures.replaceErrorEvent(event.data);
        if (replacement === undefined) {
          out += raw;
          continue;
        }
        stopped = true;
        return out + replacement;
      }
      if (data !== undefined) observe(data);
      out += raw;
      if (!completed && observer.completesStream?.(event.data, data)) completed = true;
      if (observer.endsStream(event.data, data)) {
        last = true;
        return out;
      }
    }
    return out;
  };

  /** Starts the next read and waits one turn for it: whether it settled (the stream ended, went on or broke) by then. */
  const settlesWithinTurn = (): Promise<boolean> => {
    const reading = reader.read();
    // Awaited by a later pull; until then a break must not count as an unhandled rejection.
    reading.catch(() => undefined);
    nextRead = reading;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 0);
      const settled = () => {
        clearTimeout(timer);
        resolve(true);
      };
      reading.then(settled, settled);
    });
  };

  const relay = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const send = (bytes: Uint8Array | undefined) => {
      if (!cancelled && bytes !== undefined && bytes.length > 0) controller.enqueue(bytes);
    };
    const close = (last: Uint8Array | undefined) => {
      if (cancelled) return;
      send(held);
      held = undefined;
      send(last);
      controller.close();
    };
    // Reads until there is something to pass on: a pull that enqueues nothing is not called again.
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        const reading = nextRead ?? reader.read();
        nextRead = undefined;
        chunk = await reading;
      } catch (cause) {
        // After an error event of the provider's, the stream has told its failure already.
        const told = failed;
        failed = true;
        const errorEvent = told ? "" : failures.breakOff(cause);
        await end(false, false);
        if (cancelled) return;
        if (!sse) {
          controller.error(cause);
          return;
        }
        splitter.rest();
        close(encoder.encode(errorEvent));
        return;
      }
      if (chunk.done) {
        const rest = decoder.decode();
        let last: Uint8Array | undefined;
        if (sse) {
          let text = relayEvents(rest) + splitter.rest();
          // Closed before the protocol's last event: the client is told the stream failed, not handed a cut answer.
          if (!stopped && !completed) {
            failed = true;
            text += failures.breakOff(new StreamClosedEarly("The provider's stream closed before its last event."));
          }
          last = encoder.encode(text);
        } else readArray(whole + rest, observe);
        await end(!stopped, false);
        close(last);
        return;
      }
      let out: Uint8Array;
      if (sse) {
        out = encoder.encode(relayEvents(decoder.decode(chunk.value, { stream: true })));
      } else {
        whole += decoder.decode(chunk.value, { stream: true });
        out = chunk.value;
      }
      if (stopped || last) {
        // Nothing after a replaced error event or the protocol's last event is read.
        void reader.cancel().catch(() => undefined);
        // What came before goes out now; the last bytes wait for the observer's end.
        send(held);
        held = undefined;
        await end(last && !stopped, false);
        close(out);
        return;
      }
      if (out.length === 0) continue;
      // The stream went on after what was held: it goes out now, and this read is held in its place.
      send(held);
      held = out;
      if (await settlesWithinTurn()) continue;
      send(held);
      held = undefined;
      return;
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        await relay(controller);
      } catch (cause) {
        // A failure of the relay itself: the stream cannot go on, but the call still ends once, on the record.
        unobserved = true;
        failures.internal(cause);
        void reader.cancel(cause).catch(() => undefined);
        await end(false, false);
        if (!cancelled) controller.error(cause);
      }
    },
    async cancel(reason) {
      cancelled = true;
      // The provider's stream may refuse its cancel with the client's reason; nobody is left to tell, and the call
      // ends as cancelled below. Caught at once: `end` can take longer than a turn (a store's commit), and a
      // rejection unhandled until then would end the process.
      const cancelling = reader.cancel(reason).catch(() => undefined);
      await end(false, true);
      await cancelling;
    },
  });
}

function readArray(text: string, observe: (event: JsonObject) => void): void {
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch {
    // Not a JSON array: nothing to observe.
    return;
  }
  if (Array.isArray(values)) for (const value of values) if (isObject(value)) observe(value);
}
