import type { Context } from "hono";
import type { Deps } from "../deps.js";
import { invalidRequest } from "../errors/gateway-error.js";
import { bodyReaderOf, parseJsonBody } from "../http/read-body.js";
import type { JsonObject } from "../json/json-object.js";
import type { Caller } from "../pipeline/caller.js";
import { isPageSize, maxPageChars, minPageChars } from "../window/fragment.js";

/** A window route's JSON body, read as every request's body is (see `bodyReaderOf`). */
export async function jsonBodyOf(deps: Deps, c: Context<WindowEnv>): Promise<JsonObject> {
  return parseJsonBody(await bodyReaderOf(c.env, c.req.raw)(deps.config.maxBodyBytes)).body;
}

/** A page size as asked for (a body member or a query parameter), checked. */
export function pageCharsOf(value: unknown): number {
  if (!isPageSize(value)) {
    throw invalidRequest(`'page_chars' must be a whole number from ${minPageChars} to ${maxPageChars}.`, "page_chars");
  }
  return value;
}

/** What the toolkit's routes keep per request besides its ref: who it is, as its key check found. */
export type WindowEnv = { Variables: { ref: string; caller: Caller } };
