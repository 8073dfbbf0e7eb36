import type { GatewayError } from "../errors/gateway-error.js";
import type { LogicalCall } from "../logical-call.js";
import type { JsonObject } from "./wire-fields.js";

/** A route whose body is a call: measured, and for `generate` enforced; `count` is never rejected. */
export interface MeasuredEndpoint {
  kind: "generate" | "count";
  /** Parses the wire body into the logical call; `path` is the route path below the surface's mount. */
  parse(body: JsonObject, path: string): LogicalCall;
}

/** A route forwarded as it is, without measuring (e.g. listing models). */
export interface ProxyEndpoint {
  kind: "proxy";
}

/** What a route of a surface does with a request. */
export type Endpoint = MeasuredEndpoint | ProxyEndpoint;

/** An error rendered in a surface's native shape. */
export interface RenderedError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * One provider API as clients speak it: its routes, how its bodies read, which headers
 * travel upstream, and its native error shape. Everything provider-specific lives here.
 */
export interface Surface {
  /** Label, also the key of this surface's upstream in the configuration. */
  name: "openai" | "gemini" | "anthropic";
  /** Where the surface is mounted, e.g. `/openai/v1`; the rest of the path is the upstream path. */
  mount: string;
  /** The endpoint for a method and route path, `method-not-allowed`, or undefined for an unknown route. */
  match(method: string, path: string): Endpoint | "method-not-allowed" | undefined;
  /** Request headers forwarded upstream (lowercase), credentials included. */
  forwardedHeaders: readonly string[];
  /** Whether the client sent its own provider credential. */
  hasCredential(headers: Headers, url: URL): boolean;
  /** The header carrying a server-held provider key. */
  serverCredential(key: string): [name: string, value: string];
  /** The native error shape of this surface. */
  renderError(error: GatewayError, ref: string): RenderedError;
}
