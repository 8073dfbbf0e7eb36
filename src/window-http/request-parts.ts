import type { Context } from "hono";
import type { Deps } from "../deps.js";
import { invalidRequest } from "../errors/gateway-error.js";
import { bearerToken } from "../http/keys.js";
import { bodyReaderOf, parseJsonBody } from "../http/read-body.js";
import type { RouteEnv } from "../http/route-env.js";
import type { JsonObject } from "../json/json-object.js";
import { authenticationRequired } from "../pipeline/authorize-call.js";
import { identifyCaller } from "../pipeline/caller.js";
import { isPageSize, maxPageChars, minPageChars } from "../window/fragment.js";

/** A window route's JSON body, read as every request's body is (see `bodyReaderOf`). */
export async function jsonBodyOf(deps: Deps, c: Context<RouteEnv>): Promise<JsonObject> {
  return parseJsonBody(await bodyReaderOf(c.env, c.req.raw)(deps.config.maxBodyBytes)).body;
}

/** A page size as asked for (a body member or a query parameter), checked. */
export function pageCharsOf(value: unknown): number {
  if (!isPageSize(value)) {
    throw invalidRequest(`'page_chars' must be a whole number from ${minPageChars} to ${maxPageChars}.`, "page_chars");
  }
  return value;
}

/**
 * The principal of a toolkit request, from its bearer key as on the APIs (see `identifyCaller`): a named key's id,
 * else the keyed hash of the key (none is one principal too in pass-through). 401 for a key that opens nothing.
 */
export async function callerOf(deps: Deps, request: Request): Promise<string> {
  const caller = await identifyCaller(deps, bearerToken(request.headers.get("authorization")));
  if (caller === undefined) throw authenticationRequired();
  return caller.principal();
}
