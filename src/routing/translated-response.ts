import { eventSplitter } from "../http/sse-events.js";
import { isObject } from "../json/json-object.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { UpstreamResponse } from "../transport/transport.js";
import type { CallTranslation } from "./translate-call.js";

const encoder = new TextEncoder();

/**
 * The provider's answer as the client's API gives it. A success is translated, whole or streamed; a failure stays
 * as the provider sent it, for the provider's own error classification (the client gets it in its native shape).
 */
export function translatedResponse(
  response: UpstreamResponse,
  translation: CallTranslation,
  streamed: boolean,
): UpstreamResponse {
  if (response.status < 200 || response.status >= 300) return response;
  const eventStream = (response.headers["content-type"] ?? "").includes("text/event-stream");
  return {
    status: response.status,
    // A streamed answer reaches the client as server-sent events, whatever the provider sent.
    headers: streamed && !eventStream ? { ...response.headers, "content-type": "text/event-stream" } : response.headers,
    async bytes() {
      const bytes = await response.bytes();
      const native = jsonObjectOf(bytes);
      // A body that is no JSON object stays as it is: the pipeline reports it as a malformed answer.
      return native === undefined ? bytes : encoder.encode(JSON.stringify(translation.answer(native)));
    },
    stream: () => (eventStream ? response.stream().pipeThrough(translatedEvents(translation)) : notAStream(response)),
  };
}

/** A provider's answer to a streamed call that is no event stream (a whole JSON body, say): a stream that broke off. */
class NotAnEventStream extends Error {
  override readonly name = "NotAnEventStream";
  readonly code = "NOT_AN_EVENT_STREAM";
}

/** The stream of an answer that is no event stream: its body is left unread, and the stream fails at once. */
function notAStream(response: UpstreamResponse): ReadableStream<Uint8Array> {
  void response
    .stream()
    .cancel()
    .catch(() => undefined);
  return new ReadableStream({
    start(controller) {
      controller.error(new NotAnEventStream("The provider answered a streamed call without an event stream."));
    },
  });
}

/**
 * Translates a provider's server-sent events event by event. An error event passes as it came, for the stream relay
 * to classify and replace; the provider's last event (by its protocol) closes the client's stream with the
 * translation's closing events. A provider whose protocol marks its last event and whose stream closes before it
 * breaks off: the client is told the stream failed instead of taking a cut answer as whole.
 */
function translatedEvents(translation: CallTranslation): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const splitter = eventSplitter();
  const events = translation.stream();
  const provider = translation.provider;
  let ended = false;
  const translate = (raw: string): string => {
    const data = dataOf(raw);
    if (data === undefined) return "";
    const event = jsonObjectOf(data);
    if (event !== undefined && (/^event:\s*error\s*$/m.test(raw) || isObject(event.error))) return raw;
    // An event that is no JSON object (OpenAI's `[DONE]`) carries nothing but, perhaps, the stream's end.
    let out = event === undefined ? "" : events.event(event);
    if (provider.endsStream?.(data, event)) {
      ended = true;
      out += events.end();
    }
    return out;
  };
  return new TransformStream({
    transform(chunk, controller) {
      if (ended) return;
      let out = "";
      for (const raw of splitter.push(decoder.decode(chunk, { stream: true }))) {
        out += translate(raw);
        if (ended) break;
      }
      if (out !== "") controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      if (ended) return;
      const rest = splitter.push(`${decoder.decode()}\n\n`);
      let out = rest.map(translate).join("");
      if (!ended && provider.endsStream !== undefined) {
        if (out !== "") controller.enqueue(encoder.encode(out));
        controller.error(new Error(`The ${provider.name} stream closed before its last event.`));
        return;
      }
      if (!ended) out += events.end();
      controller.enqueue(encoder.encode(out));
    },
  });
}

/** The data of one raw event: its `data:` lines joined, or undefined when it has none. */
function dataOf(raw: string): string | undefined {
  const lines = raw.split(/\r\n|\r|\n/).filter((line) => line.startsWith("data:"));
  if (lines.length === 0) return undefined;
  return lines.map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
}
