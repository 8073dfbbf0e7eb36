import type { HttpBindings } from "@hono/node-server";
import { type AbortNotice, CallNotice, clientNoticeKey } from "../../http/abort-notice.js";

/** @hono/node-server's env of a request, with the notice of its client leaving (see `clientNoticeKey`). */
export type NodeEnv = HttpBindings & { [clientNoticeKey]: AbortNotice };

/**
 * `env` with a notice that aborts when the connection closes before the answer was written whole, or the request's
 * body broke off: when @hono/node-server aborts the Request's signal. Reading that signal would make it, an
 * `AbortSignal` (see `CallNotice` for its cost); the notice and its one `close` listener are all a call pays here.
 */
export function clientEnv({ incoming, outgoing }: HttpBindings): NodeEnv {
  const notice = new CallNotice();
  outgoing.on("close", () => {
    if (incoming.errored !== null || !outgoing.writableFinished) {
      notice.abort(new DOMException("The client closed the connection before its answer was written.", "AbortError"));
    }
  });
  return { incoming, outgoing, [clientNoticeKey]: notice };
}
