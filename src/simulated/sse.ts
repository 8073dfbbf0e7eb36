/** A `data:` frame; Gemini separates frames with CRLF pairs, OpenAI with LF pairs. */
export function dataFrame(value: unknown, separator: "\n\n" | "\r\n\r\n" = "\n\n"): string {
  return `data: ${JSON.stringify(value)}${separator}`;
}

/** A named frame (`event:` then `data:`), as the Responses and Anthropic streams send them. */
export function eventFrame(event: string, value: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`;
}

/** A `text/event-stream` response that sends each frame as its own chunk. */
export function sseResponse(frames: readonly string[]): Response {
  const encoder = new TextEncoder();
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const frame = frames[index];
      index++;
      if (frame === undefined) controller.close();
      else controller.enqueue(encoder.encode(frame));
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
  });
}

/** Splits text into pieces of at most `size` code points (never inside a surrogate pair) for deltas. */
export function textDeltas(text: string, size = 16): string[] {
  const codePoints = Array.from(text);
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(""));
  }
  return pieces.length > 0 ? pieces : [""];
}
