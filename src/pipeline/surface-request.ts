import type { GatewayError } from "../errors/gateway-error.js";
import type { AbortNotice } from "../http/abort-notice.js";
import type { BodyReader } from "../http/read-body.js";
import type { Surface } from "../surfaces/surface.js";
import type { Caller } from "./caller.js";

/** One request on a surface, from the route to the client's response. */
export interface SurfaceRequest {
  surface: Surface;
  request: Request;
  /** Aborts when the client goes away: the runtime's notice, else the request's signal (see `clientNoticeOf`). */
  client: AbortNotice;
  /** Reads the request's body: the runtime's reader, else the request's own (see `bodyReaderOf`). */
  body: BodyReader;
  /** The request's URL, parsed once. */
  url: URL;
  /** The route path below the surface's mount, e.g. `/chat/completions`. */
  path: string;
  /** The policy named in the URL, or undefined for the default. */
  policyRef: string | undefined;
  ref: string;
  /** Why the request path is no route of the surface, if it is not (answered after the key check). */
  refusal?: GatewayError;
  /** Who the request is: set once its key is checked, before anything else of it is read (see `CallFlow`). */
  caller?: Caller;
  /** The answer job this call runs, when it is a job's run. */
  job?: string;
}
