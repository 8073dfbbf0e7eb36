import { isObject, type JsonObject } from "../../json/json-object.js";
import { emptyCall } from "../../logical-call.js";
import type { CachedPrefixList, Endpoint, MethodNotAllowed, PrefixEffect, PrefixEffectReader } from "../surface.js";
import { optionalString } from "../wire-fields.js";
import { arrayOf, capture, parameters, readBody, readTape } from "../wire-rules.js";
import { content, generateContentMembers, message } from "./generate-content-body.js";

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

/** A create carries what the calls that use it will not: system instruction, contents, tools. */
const createBody = message({
  contents: arrayOf(content),
  systemInstruction: generateContentMembers.systemInstruction,
  tools: generateContentMembers.tools,
  toolConfig: generateContentMembers.toolConfig,
  ...parameters("model", "ttl", "expireTime", "displayName", "name", "kmsKeyName"),
});

/** A create is measured like the call that will use it: its system instruction, contents and tools. */
const create: Endpoint = {
  kind: "cache",
  parse: (body) => readBody(createBody, body, emptyCall()),
  readTape: (tape) => readTape(createBody, tape, emptyCall()),
  prefixEffect: effectOf("cached-content-created"),
};

/** The name an item route addresses as the provider gives names (`cachedContents/{id}`), its segment decoded. */
function nameOf(path: string): string | undefined {
  const name = itemRoute.exec(path)?.[2];
  if (name === undefined) return undefined;
  try {
    return decodeURIComponent(name);
  } catch {
    return undefined;
  }
}

/** A list's caches by their names (Gemini leaves `cachedContents` out of an empty list). */
const cacheList: CachedPrefixList = {
  namesOf: (list) =>
    Array.isArray(list.cachedContents)
      ? list.cachedContents.flatMap((cache) => (isObject(cache) && typeof cache.name === "string" ? [cache.name] : []))
      : [],
  keeping: (list, kept) => {
    const { cachedContents, ...rest } = list;
    if (!Array.isArray(cachedContents)) return rest;
    const shown = cachedContents.filter(
      (cache) => isObject(cache) && typeof cache.name === "string" && kept.has(cache.name),
    );
    return { ...rest, cachedContents: shown };
  },
  nextPageToken: (list) =>
    typeof list.nextPageToken === "string" && list.nextPageToken !== "" ? list.nextPageToken : undefined,
  pageTokenParameter: "pageToken",
};

/** A time or duration of the API (`"3600s"`, an RFC 3339 time): a string, whose form the provider judges. */
const timeValue = capture((_call, value, path) => void optionalString(value, path));

/**
 * A patch may change only a cache's expiry (the API's "only expiration is updatable"), and only that is taken: the
 * gateway keeps the size it measured at the create, so a member that would change what the model reads (`contents`,
 * `systemInstruction`, `tools`, `toolConfig`, …) or any other is refused, nothing sent. The `updateMask` query goes as
 * it came: a mask without its member in the body could only clear content, never add to the recorded size.
 */
const patchBody = message({ ttl: timeValue, expireTime: timeValue });

const list: Endpoint = { kind: "proxy", listsCachedPrefixes: cacheList };
const read: Endpoint = { kind: "proxy", cachedPrefixOf: nameOf };
const patch: Endpoint = {
  kind: "proxy",
  cachedPrefixOf: nameOf,
  body: patchBody,
  prefixEffect: effectOf("cached-content-expiry"),
};
const remove: Endpoint = {
  kind: "proxy",
  cachedPrefixOf: nameOf,
  prefixEffect: (_response, path) => {
    const name = nameOf(path);
    return name === undefined ? undefined : { kind: "cached-content-deleted", name };
  },
};

/**
 * Gemini's cachedContents routes: create (measured, recorded under the returned name and expiry for the caller's
 * principal), list and get (proxied), patch (a new expiry only, recorded), delete (forgotten). With gateway keys a
 * caller lists, gets, patches and deletes only the caches it created through the gateway.
 */
export function matchCachedContents(method: string, path: string): Endpoint | MethodNotAllowed | undefined {
  if (collectionRoute.test(path)) {
    return method === "POST" ? create : method === "GET" ? list : notAllowed("GET, POST");
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
