import type { GatewayError } from "../errors/gateway-error.js";
import type { LogicalCall } from "../logical-call.js";
import type { Policy } from "../policy/policy.js";
import type { JsonObject } from "./wire-fields.js";

/** A request body rewritten for the provider, and what a schema projection left out. */
export interface TransportedBody {
  body: JsonObject;
  omitted: string[];
}

/** How an endpoint carries structured output: the schema on the way in, the answer on the way out. */
export interface StructuredOutput {
  /** The full JSON Schema of the response schema the body sends natively, if any. */
  fullSchema(call: LogicalCall, body: JsonObject): unknown;
  /**
   * The body the provider receives for a full schema under a policy, or undefined to send the
   * client's body unchanged. `native` says whether the client sent the schema natively.
   */
  transport(body: JsonObject, fullSchema: unknown, policy: Policy, native: boolean): TransportedBody | undefined;
  /** The answer text of a whole response body, or undefined when it carries none. */
  answerText(response: JsonObject): string | undefined;
  /** A copy of the response body with its answer text replaced, e.g. by a repaired answer. */
  withAnswerText(response: JsonObject, text: string): JsonObject;
  /** The answer text one streamed event adds (its data parsed as JSON). */
  streamedText(event: JsonObject): string | undefined;
  /** Whether a provider's 400 error body says it rejected the response schema. */
  rejectsSchema(errorBody: JsonObject): boolean;
}

/** A route whose body is a call: measured, and for `generate` enforced; `count` is never rejected. */
export interface MeasuredEndpoint {
  kind: "generate" | "count";
  /** Parses the wire body into the logical call; `path` is the route path below the surface's mount. */
  parse(body: JsonObject, path: string): LogicalCall;
  /** Structured output of a `generate` route. */
  structuredOutput?: StructuredOutput;
}

/** A route forwarded as it is, without measuring (e.g. listing models). */
export interface ProxyEndpoint {
  kind: "proxy";
}

/** What a route of a surface does with a request. */
export type Endpoint = MeasuredEndpoint | ProxyEndpoint;

/** A known route asked with a method it does not take; `allow` lists the ones it does. */
export interface MethodNotAllowed {
  kind: "method-not-allowed";
  allow: string;
}

/** The endpoint when the method is the route's one method, else `method-not-allowed`. */
export function forMethod(method: string, allowed: string, endpoint: Endpoint): Endpoint | MethodNotAllowed {
  return method === allowed ? endpoint : { kind: "method-not-allowed", allow: allowed };
}

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
  match(method: string, path: string): Endpoint | MethodNotAllowed | undefined;
  /** Request headers forwarded upstream (lowercase), credentials included. */
  forwardedHeaders: readonly string[];
  /** Whether the client sent its own provider credential. */
  hasCredential(headers: Headers, url: URL): boolean;
  /** The header carrying a server-held provider key. */
  serverCredential(key: string): [name: string, value: string];
  /** The native error shape of this surface. */
  renderError(error: GatewayError, ref: string): RenderedError;
}
