import { invalidRequest } from "../errors/gateway-error.js";
import type { JsonObject } from "../json/json-object.js";
import { emptyCall } from "../logical-call.js";
import { object, type Rule, readBody } from "./wire-rules.js";

/** The body of a route that takes none: every member is one it does not take. */
const noMembers = object({});

/**
 * Refuses the body of a proxied route (forwarded as it came, never measured) in which the model could read anything:
 * read by the route's rule (`ProxyEndpoint.body`, which declares only members the model never reads, such as a cache's
 * new expiry; absent, the route takes none), any member it does not declare is INVALID_REQUEST naming its path, under
 * every policy. Contract section 3: what is sent is what was measured, and such a body measures nothing.
 */
export function checkProxiedBody(rule: Rule | undefined, body: JsonObject): void {
  const call = readBody(rule ?? noMembers, body, emptyCall());
  const field = call.other[0] ?? call.unmeasured[0];
  if (field === undefined) return;
  throw invalidRequest(
    `'${field.path}' is not a field this route takes: it goes upstream unmeasured, so it takes only what the model never reads; nothing was sent.`,
    field.path,
  );
}
