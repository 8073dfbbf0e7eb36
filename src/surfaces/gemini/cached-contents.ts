import { emptyCall } from "../../logical-call.js";
import type { Endpoint, MethodNotAllowed, PrefixEffect, PrefixEffectReader } from "../surface.js";
import type { JsonObject } from "../wire-fields.js";
import { parseGenerateContent } from "./parse-generate-content.js";

const collectionRoute = /^\/(v1beta|v1|v1alpha)\/cachedContents$/;
const itemRoute = /^\/(v1beta|v1|v1alpha)\/(cachedContents\/[^/]+)$/;

/** The expiry a cached-content resource states, as epoch milliseconds. */
function expiryOf(resource: JsonObject): number | undefined {
  const expiresAt = typeof resource.expireTime === "string" ? Date.parse(resource.expireTime) : Number.NaN;
  return Number.isFinite(expiresAt) ? expiresAt : undefined;
}

function effectOf(kind: "cached-content-created" | "cached-content-expiry"): PrefixEffectReader {
  return (resource) => {
    const expiresAt = expiryOf(resource);
    const name = resource.name;
    if (typeof name !== "string" || expiresAt === undefined) return undefined;
    return { kind, name, expiresAt } satisfies PrefixEffect;
  };
}

/** A create is measured like the call that will use it: its system instruction, contents and tools. */
const create: Endpoint = {
  kind: "cache",
  parse(body) {
    const call = parseGenerateContent({ ...body, contents: body.contents ?? [] }, undefined, false);
    return {
      ...emptyCall(),
      system: call.system,
      messages: call.messages,
      tools: call.tools,
      mediaParts: call.mediaParts,
    };
  },
  prefixEffect: effectOf("cached-content-created"),
};

const read: Endpoint = { kind: "proxy" };
const patch: Endpoint = { kind: "proxy", prefixEffect: effectOf("cached-content-expiry") };
const remove: Endpoint = {
  kind: "proxy",
  prefixEffect: (_response, path) => {
    const name = itemRoute.exec(path)?.[2];
    return name === undefined ? undefined : { kind: "cached-content-deleted", name };
  },
};

/**
 * Gemini's cachedContents routes: create (measured, recorded under the returned name and
 * expiry), list and get (proxied), patch (the new expiry recorded), delete (forgotten).
 */
export function matchCachedContents(method: string, path: string): Endpoint | MethodNotAllowed | undefined {
  if (collectionRoute.test(path)) {
    return method === "POST" ? create : method === "GET" ? read : notAllowed("GET, POST");
  }
  if (!itemRoute.test(path)) return undefined;
  return method === "GET"
    ? read
    : method === "PATCH"
      ? patch
      : method === "DELETE"
        ? remove
        : notAllowed("GET, PATCH, DELETE");
}

function notAllowed(allow: string): MethodNotAllowed {
  return { kind: "method-not-allowed", allow };
}
