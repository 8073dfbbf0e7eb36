import type { IncomingMessage } from "node:http";
import type { HttpBindings } from "@hono/node-server";
import { type AbortNotice, CallNotice, clientNoticeKey } from "../../http/abort-notice.js";
import { type BodyReader, bodyReaderKey, readCappedBody, tooLarge } from "../../http/read-body.js";

/**
 * @hono/node-server's env of a request, with the notice of its client leaving (see `clientNoticeKey`) and the reader
 * of its body (see `bodyReaderKey`).
 */
export type NodeEnv = HttpBindings & { [clientNoticeKey]: AbortNotice; [bodyReaderKey]: BodyReader };

/**
 * `env` with a notice that aborts when the connection closes before the answer was written whole, or the request's
 * body broke off: when @hono/node-server aborts the Request's signal. Reading that signal would make it, an
 * `AbortSignal` (see `CallNotice` for its cost); the notice and its one `close` listener are all a call pays here.
 * And with a body reader that takes a body of a declared length from the socket as it came (see `readDeclaredBody`).
 */
export function clientEnv(request: Request, { incoming, outgoing }: HttpBindings): NodeEnv {
  const notice = new CallNotice();
  outgoing.on("close", () => {
    if (incoming.errored !== null || !outgoing.writableFinished) {
      notice.abort(new DOMException("The client closed the connection before its answer was written.", "AbortError"));
    }
  });
  const body: BodyReader = (limit) => {
    // The parser's own view of the head: no Headers object is made, and it holds the body to this length.
    const declared = incoming.headers["content-length"];
    // A chunked body is cut at the limit while it streams in, by the Request's reader.
    if (declared === undefined || !/^\d+$/.test(declared)) return readCappedBody(request, limit);
    if (Number(declared) > limit) return Promise.reject(tooLarge(limit));
    return readDeclaredBody(incoming, notice, limit);
  };
  return { incoming, outgoing, [clientNoticeKey]: notice, [bodyReaderKey]: body };
}

/**
 * The body of `incoming`, whose length the HTTP parser holds to the declared one. A body that came in one chunk is
 * handed over as that chunk's memory (the chunk owns it whole), not copied as `Request.arrayBuffer()` copies it;
 * several are joined once. The bytes are counted all the same: a lenient parser (`--insecure-http-parser`) reads a
 * body that is both chunked and of a declared length as chunked, of any length, and one past `limit` is refused.
 * A client that leaves before its body is whole sets off `notice`, so that the call ends as a cancelled one; its
 * reader is refused with the same AbortError.
 */
function readDeclaredBody(
  incoming: IncomingMessage,
  notice: CallNotice,
  limit: number,
): Promise<Uint8Array<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.byteLength;
      if (length <= limit) chunks.push(chunk);
      else {
        stop();
        chunks.length = 0;
        reject(tooLarge(limit));
      }
    };
    const onEnd = () => {
      stop();
      const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      // A plain Uint8Array, as on Workers: a Buffer's `slice` would be a view where the pipeline means a copy.
      resolve(new Uint8Array(whole.buffer as ArrayBuffer, whole.byteOffset, whole.byteLength));
    };
    const onGone = () => {
      stop();
      const reason = new DOMException(
        "The client closed the connection before its request's body was whole.",
        "AbortError",
      );
      notice.abort(reason);
      reject(reason);
    };
    const stop = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onGone);
      incoming.off("close", onGone);
    };
    if (incoming.destroyed) return onGone();
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onGone);
    incoming.on("close", onGone);
  });
}
