import type { JsonObject } from "../json/json-object.js";
import type { TokenCountRequest } from "./surface.js";

/** A count request to `path` for the members of `body` the counting route takes; its answer's number at `member`. */
export function tokenCountRequest(
  path: string,
  body: JsonObject,
  member: string,
  countable?: ReadonlySet<string>,
): TokenCountRequest {
  return {
    path,
    body:
      countable === undefined ? body : Object.fromEntries(Object.entries(body).filter(([name]) => countable.has(name))),
    tokensOf: (response) => (typeof response[member] === "number" ? response[member] : undefined),
  };
}
