import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/** The request headers every SDK may send, by exact name; each surface adds its own (`browserRequestHeaders`). */
const commonHeaderNames = ["content-type", "user-agent"];

/** Families of request headers whose members change with SDK versions (`x-stainless-retry-count`, …). */
const allowedHeaderPrefixes = ["x-stainless-", "x-promptgate-"];

/**
 * The response headers a page may read besides the safelisted ones: every `x-promptgate-*` header the gateway
 * sets, the remaining room of its limits over time, and the retry hints the SDKs obey (without them a browser SDK
 * retries a call the gateway refused for good).
 */
export const exposedHeaders = [
  "x-promptgate-ref",
  "x-promptgate-prompt-size",
  "x-promptgate-validation",
  "x-promptgate-simulated",
  "x-promptgate-model",
  "x-promptgate-model-fallback",
  "x-promptgate-citations-removed",
  "x-promptgate-remaining-chars",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-tokens",
  "x-should-retry",
  "retry-after",
  "retry-after-ms",
];

/** The methods of the surface routes. */
const allowedMethods = ["GET", "HEAD", "POST", "PATCH", "DELETE"];

/**
 * The request headers (lowercase) a browser page may send: the common ones and, per surface, the headers it forwards
 * upstream and those its SDK sends from a browser (`Surface.forwardedHeaders`, `Surface.browserHeaders` of
 * src/surfaces/surface.ts, passed in by the app).
 */
export function browserRequestHeaders(
  surfaces: readonly { forwardedHeaders: readonly string[]; browserHeaders?: readonly string[] }[],
): string[] {
  const names = surfaces.flatMap((surface) => [...surface.forwardedHeaders, ...(surface.browserHeaders ?? [])]);
  return [...new Set([...commonHeaderNames, ...names])];
}

/** Whether every header a preflight asks for is one of `allowed` or of the SDKs' header families. */
export function requestedHeadersAllowed(requested: string | undefined, allowed: readonly string[]): boolean {
  if (requested === undefined) return true;
  return requested
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "")
    .every((name) => allowed.includes(name) || allowedHeaderPrefixes.some((prefix) => name.startsWith(prefix)));
}

/**
 * CORS for browser pages of `origins` (`*`: any origin), through Hono's `cors`. A preflight is answered here, before
 * the key check (it carries no credentials) and without a call record. CORS has no wildcard for header names, so a
 * preflight's requested headers are echoed when each is one of the SDKs' headers; otherwise the fixed names are
 * listed, which leaves the unknown header out and so makes the browser refuse the call. An `OPTIONS` request that
 * is no preflight goes to its route as without CORS.
 */
export function browserAccess(origins: readonly string[], headerNames: readonly string[]): MiddlewareHandler {
  const options = {
    origin: origins.includes("*") ? "*" : [...origins],
    allowMethods: allowedMethods,
    exposeHeaders: exposedHeaders,
    maxAge: 600,
  };
  const echoing = cors(options);
  const listing = cors({ ...options, allowHeaders: [...headerNames] });
  return async function browserAccess(c, next) {
    if (c.req.method !== "OPTIONS") return echoing(c, next);
    if (c.req.header("origin") === undefined || c.req.header("access-control-request-method") === undefined) {
      return next();
    }
    // Either answer varies with the requested headers, and Hono's `cors` says so (`Vary`) in both.
    const allowed = requestedHeadersAllowed(c.req.header("access-control-request-headers"), headerNames);
    return allowed ? echoing(c, next) : listing(c, next);
  };
}
