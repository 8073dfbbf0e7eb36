import type { Endpoint, MethodNotAllowed, ProxyEndpoint } from "../surface.js";
import { finalResponseOf, responseDeleted, responseEnded, responseIdOf } from "./responses-history.js";
import { responsesJobs } from "./responses-jobs.js";

/** A Responses id as the API makes them (`resp_…`); any other segment is no route, so it never reaches upstream. */
export const responseIdPattern = /^[A-Za-z0-9_-]{1,256}$/;

/** Routes below `/responses/` that look like ids but are not, and that this surface does not serve. */
const notIds = new Set(["compact", "input_tokens"]);

/** The members of a stored response's route that name its id and say what it does to an answer job of that id. */
function job(jobAction: NonNullable<ProxyEndpoint["jobAction"]>) {
  return { responseIdOf, jobAction, jobs: responsesJobs };
}

/** A stored response's routes, by what follows `/responses/{id}`, each with its methods. */
const routes = new Map<string, Map<string, Endpoint>>([
  [
    "",
    new Map<string, Endpoint>([
      // A retrieval that finds the response ended, as JSON or at the end of its stream, makes its output known.
      ["GET", { kind: "proxy", prefixEffect: responseEnded, finalResponseOf, ...job("retrieve") }],
      ["DELETE", { kind: "proxy", prefixEffect: responseDeleted, ...job("delete") }],
    ]),
  ],
  // A cancel takes no body (it declares no `body`): any member is refused, and only an empty body or `{}` goes upstream.
  ["/cancel", new Map<string, Endpoint>([["POST", { kind: "proxy", prefixEffect: responseEnded, ...job("cancel") }]])],
  ["/input_items", new Map<string, Endpoint>([["GET", { kind: "proxy", ...job("input_items") }]])],
]);

/**
 * The lifecycle routes of a stored (e.g. background) response, proxied for the principal whose session it is: `GET` and `DELETE
 * /responses/{id}`, `POST /responses/{id}/cancel` and `GET /responses/{id}/input_items`;
 * undefined for any other path.
 */
export function matchStoredResponse(method: string, path: string): Endpoint | MethodNotAllowed | undefined {
  const [root, collection, id, below, ...deeper] = path.split("/");
  if (root !== "" || collection !== "responses" || id === undefined || deeper.length > 0) return undefined;
  if (!responseIdPattern.test(id) || notIds.has(id)) return undefined;
  const methods = routes.get(below === undefined ? "" : `/${below}`);
  if (methods === undefined) return undefined;
  return methods.get(method) ?? { kind: "method-not-allowed", allow: [...methods.keys()].join(", ") };
}
