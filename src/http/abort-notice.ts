import { givenByRuntime } from "./runtime-env.js";

/**
 * What the pipeline needs of an abort signal: whether it aborted, why, and listeners for when it does. A standard
 * `AbortSignal` is one (a client's on Workers, an answer job's); so is `CallNotice`, which a call makes instead on
 * the hot path. undici's `request()` takes either (it asks only for `addEventListener`); `fetch` takes a standard
 * signal, which `abortSignalOf` makes.
 */
export interface AbortNotice {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * An `AbortNotice` its owner sets off with `abort`, each listener called once. Not an `AbortController`: on Node 20
 * every `AbortSignal` has a hidden class of its own (Node makes it an `EventTarget`, swaps its prototype and adds
 * fields), so V8 builds a class per signal and every inline cache that meets signals turns slow. A call made two; they
 * cost 7 % of the CPU per call at 64 connections and 12 % at one. A listener added
 * twice is called twice, unlike an `EventTarget`'s.
 */
export class CallNotice implements AbortNotice {
  aborted = false;
  reason: unknown = undefined;
  #listeners: (() => void)[] = [];

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at !== -1) this.#listeners.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}

/** A standard `AbortSignal` that aborts with `notice`, for `fetch`; a standard signal is handed back as it is. */
export function abortSignalOf(notice: AbortNotice): AbortSignal {
  if (notice instanceof AbortSignal) return notice;
  const controller = new AbortController();
  if (notice.aborted) controller.abort(notice.reason);
  else notice.addEventListener("abort", () => controller.abort(notice.reason));
  return controller.signal;
}

/**
 * Where a runtime that learns of a client leaving by other means than the `Request`'s signal puts an `AbortNotice` in
 * the app's env (Hono's `c.env`): Node's, from the response's `close` (the Request's signal would be an
 * `AbortSignal`). A symbol, so that no Workers binding can stand in for it.
 */
export const clientNoticeKey: unique symbol = Symbol("promptgate.clientNotice");

/** The notice of a request's client leaving: the runtime's (see `clientNoticeKey`), else the Request's signal. */
export function clientNoticeOf(env: unknown, request: Request): AbortNotice {
  return givenByRuntime<AbortNotice>(env, clientNoticeKey) ?? request.signal;
}
