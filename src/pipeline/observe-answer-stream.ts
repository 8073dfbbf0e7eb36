import { createParser } from "eventsource-parser";
import type { StructuredOutput } from "../surfaces/surface.js";
import { isObject } from "../surfaces/wire-fields.js";

/**
 * Passes a streamed answer through unchanged, chunk by chunk as it arrives, while collecting
 * its answer text. `onEnd` runs exactly once: with the text (undefined if the stream carried
 * none) when the stream ends, or with undefined when it breaks off or the client cancels.
 * Server-sent events are read event by event; a JSON-array stream (Gemini without
 * `alt=sse`) is read whole at its end.
 */
export function observeAnswerStream(
  stream: ReadableStream<Uint8Array>,
  contentType: string,
  output: StructuredOutput,
  onEnd: (answerText: string | undefined) => void,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const sse = contentType.includes("text/event-stream");
  const reader = stream.getReader();
  let answer: string | undefined;
  let whole = "";
  let ended = false;
  const end = (text: string | undefined) => {
    if (ended) return;
    ended = true;
    onEnd(text);
  };
  const parser = createParser({
    onEvent(event) {
      const text = textOf(event.data, output);
      if (text !== undefined) answer = (answer ?? "") + text;
    },
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        end(undefined);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        end(sse ? answer : textOfArray(whole + decoder.decode(), output));
        controller.close();
        return;
      }
      controller.enqueue(chunk.value);
      const text = decoder.decode(chunk.value, { stream: true });
      if (sse) parser.feed(text);
      else whole += text;
    },
    cancel(reason) {
      end(undefined);
      return reader.cancel(reason);
    },
  });
}

function textOf(data: string, output: StructuredOutput): string | undefined {
  try {
    const event: unknown = JSON.parse(data);
    return isObject(event) ? output.streamedText(event) : undefined;
  } catch {
    return undefined;
  }
}

function textOfArray(text: string, output: StructuredOutput): string | undefined {
  try {
    const responses: unknown = JSON.parse(text);
    if (!Array.isArray(responses)) return undefined;
    const texts = responses.map((response) => (isObject(response) ? output.streamedText(response) : undefined));
    return texts.some((piece) => piece !== undefined) ? texts.join("") : undefined;
  } catch {
    return undefined;
  }
}
