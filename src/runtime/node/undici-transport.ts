import { Agent, type Dispatcher } from "undici";
import type { Transport, UpstreamRequest, UpstreamResponse } from "../../transport/transport.js";

/**
 * The Node transport: undici's Agent with keep-alive, several times cheaper per call than WHATWG fetch on Node.
 * Response bodies are read whole or streamed through. undici's own connect, header and body timeouts are off: the
 * pipeline times a call (contract section 11), aborting it through the request's signal: its connect timeout ends
 * when undici starts the request on an open connection (`connected`), its first-byte and idle timeouts and the
 * policy's deadline are undici's header and body timeouts' counterparts, per policy and for streamed calls only. A redirect is never followed (no redirect interceptor on the Agent): the 3xx comes back as
 * it is, for the pipeline to refuse, rather than the prompt and key going to another host.
 *
 * It dispatches with a handler of its own (`AnswerHandler`) rather than through undici's `request()`, which wraps
 * every answer's body in a Node stream and an async resource, reads the body back out of the stream, and hands over
 * headers that had to be copied once more into a record of strings.
 */
export function undiciTransport(): Transport {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: 256,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: 0 },
  });
  return (upstream) =>
    new Promise((resolve, reject) => {
      const { signal } = upstream;
      if (signal?.aborted) return reject(signal.reason);
      // Given origin and path, as undici's own `request()` would pass them on. The configuration admits http(s)
      // base URLs only, as undici's own check would.
      const url = new URL(upstream.url);
      agent.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: upstream.method as Dispatcher.HttpMethod,
          headers: upstream.headers,
          body: upstream.body,
        },
        new AnswerHandler(upstream, resolve, reject),
      );
    });
}

/** Bytes of an answer's body held while nobody reads it yet, before the socket is paused (as undici's body stream). */
const heldBytes = 64 * 1024;

/**
 * One provider call's answer as undici hands it over: its status and headers settle the transport's promise; its
 * body is gathered for `bytes()` or passed on by `stream()`, whichever is asked for (once). Until then at most
 * `heldBytes` are held and the socket is paused. The request's signal aborts the call until the body has ended,
 * as does cancelling the stream.
 */
class AnswerHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #started = false;
  #chunks: Uint8Array[] = [];
  #length = 0;
  #ended = false;
  #failure: { error: unknown } | undefined;
  /** Whether the body was asked for, whole or as a stream: it is read once. */
  #claimed = false;
  #reader: { whole: (body: Uint8Array<ArrayBuffer>) => void; fail: (error: unknown) => void } | undefined;
  #stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  readonly #signal: UpstreamRequest["signal"];
  readonly #resolve: (response: UpstreamResponse) => void;
  readonly #reject: (error: unknown) => void;
  readonly #connected: (() => void) | undefined;
  readonly #onAbort = () => this.#abort(this.#signal?.reason);

  constructor(
    upstream: UpstreamRequest,
    resolve: (response: UpstreamResponse) => void,
    reject: (error: unknown) => void,
  ) {
    this.#signal = upstream.signal;
    this.#connected = upstream.connected;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#signal?.addEventListener("abort", this.#onAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#signal?.aborted) controller.abort(this.#signal.reason as Error);
    else this.#connected?.();
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, given: Record<string, unknown>): void {
    // An informational answer (1xx) precedes the answer.
    if (status < 200) return;
    this.#started = true;
    const headers: Record<string, string> = {};
    for (const name of Object.keys(given)) {
      const value = given[name];
      if (typeof value === "string") headers[name] = value;
      else if (Array.isArray(value)) headers[name] = value.join(", ");
    }
    this.#resolve({ status, headers, bytes: () => this.#bytes(), stream: () => this.#body() });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Uint8Array): void {
    // A cancelled stream's call is being aborted: what still arrives goes nowhere.
    if (this.#claimed && this.#reader === undefined && this.#stream === undefined) return;
    if (this.#stream !== undefined) {
      this.#stream.enqueue(chunk);
      if ((this.#stream.desiredSize ?? 0) <= 0) controller.pause();
      return;
    }
    this.#chunks.push(chunk);
    this.#length += chunk.byteLength;
    if (this.#reader === undefined && this.#length >= heldBytes) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    if (this.#reader !== undefined) this.#reader.whole(this.#joined());
    else this.#stream?.close();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#signal?.removeEventListener("abort", this.#onAbort);
    if (!this.#started) {
      this.#reject(error);
      return;
    }
    this.#failure = { error };
    this.#chunks = [];
    this.#reader?.fail(error);
    this.#stream?.error(error);
  }

  #abort(reason: unknown): void {
    // Before `onRequestStart` (waiting for a connection), the call fails now and that step aborts it, if it comes.
    if (this.#controller === undefined) this.#reject(reason);
    else this.#controller.abort(reason as Error);
  }

  #claim(): void {
    if (this.#claimed) throw new TypeError("The provider's answer body was read already.");
    this.#claimed = true;
  }

  #bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Promise((whole, fail) => {
      this.#claim();
      if (this.#failure !== undefined) return fail(this.#failure.error);
      if (this.#ended) return whole(this.#joined());
      this.#reader = { whole, fail };
      this.#controller?.resume();
    });
  }

  #body(): ReadableStream<Uint8Array> {
    this.#claim();
    return new ReadableStream<Uint8Array>(
      {
        start: (stream) => {
          for (const chunk of this.#chunks) stream.enqueue(chunk);
          this.#chunks = [];
          if (this.#failure !== undefined) return stream.error(this.#failure.error);
          if (this.#ended) return stream.close();
          this.#stream = stream;
        },
        pull: () => this.#controller?.resume(),
        cancel: (reason) => {
          this.#stream = undefined;
          if (!this.#ended && this.#failure === undefined)
            this.#abort(reason ?? new Error("The stream was cancelled."));
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: heldBytes }),
    );
  }

  /** The body gathered so far as one array, which it then holds alone. */
  #joined(): Uint8Array<ArrayBuffer> {
    const chunks = this.#chunks;
    this.#chunks = [];
    const whole = new Uint8Array(this.#length);
    let at = 0;
    for (const chunk of chunks) {
      whole.set(chunk, at);
      at += chunk.byteLength;
    }
    return whole;
  }
}
