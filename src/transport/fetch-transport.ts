import { abortSignalOf } from "../http/abort-notice.js";
import type { Transport } from "./transport.js";

/** Anything that answers a standard Request: global `fetch`, a Hono app, the simulated provider. */
export type FetchFunction = (request: Request) => Promise<Response>;

/**
 * A transport over a fetch function; the response body is streamed or read whole on demand. `fetch` does not tell
 * when its connection is open, so the request counts as connected as it starts: the connect timeout bounds nothing
 * here, and a streamed call's first-byte timeout runs from the start (contract section 11). A redirect is never followed (`redirect: "manual"`): following it would send the prompt and the
 * provider key to whatever host the `location` names. The 3xx comes back as it is, for the
 * pipeline to refuse.
 */
export function fetchTransport(fetchFunction: FetchFunction): Transport {
  return async (upstream) => {
    upstream.connected?.();
    const response = await fetchFunction(
      new Request(upstream.url, {
        method: upstream.method,
        headers: upstream.headers,
        body: upstream.body ?? null,
        signal: upstream.signal === undefined ? null : abortSignalOf(upstream.signal),
        redirect: "manual",
      }),
    );
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return {
      status: response.status,
      headers,
      bytes: async () => new Uint8Array(await response.arrayBuffer()),
      stream: () => response.body ?? new ReadableStream({ start: (controller) => controller.close() }),
    };
  };
}

/** Sends calls for URLs under `origin` to `local`, every other call to `network`. */
export function routeByOrigin(origin: string, local: Transport, network: Transport): Transport {
  const prefix = `${origin}/`;
  return (request) => (request.url.startsWith(prefix) ? local(request) : network(request));
}
