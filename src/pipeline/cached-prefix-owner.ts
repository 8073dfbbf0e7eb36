import type { DepsOf } from "../deps.js";
import { upstreamErrorMessages } from "../errors/error-classes.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { JsonObject } from "../json/json-object.js";
import type { CachedPrefixRecord, CachedPrefixStore, SecretStore } from "../store/store.js";
import type { CachedPrefixList } from "../surfaces/surface.js";
import type { UpstreamCall } from "./upstream-call.js";

/** What telling a caller's cached prefixes uses of the gateway: the store's cached prefixes and secret. */
type OwnerDeps = DepsOf<CachedPrefixStore & SecretStore>;

/**
 * Whether the gateway is the boundary between callers' cached prefixes: with gateway keys, where every caller
 * reaches the provider with the one server-held key. In pass-through the caller's own provider key is.
 */
export function gatewayGuardsPrefixes(deps: OwnerDeps): boolean {
  return deps.config.gatewayKeyMode;
}

/**
 * The record of a cached prefix the caller created through the gateway; undefined for one unknown, expired,
 * another principal's or kept before records had a principal (no one's), alike.
 */
export async function ownCachedPrefix(
  deps: OwnerDeps,
  call: UpstreamCall,
  name: string,
  now: number,
): Promise<CachedPrefixRecord | undefined> {
  return ownRecord(await deps.store.getCachedPrefix(name, now), await call.caller.principal());
}

function ownRecord(record: CachedPrefixRecord | undefined, principal: string): CachedPrefixRecord | undefined {
  return record !== undefined && record.principal !== "" && record.principal === principal ? record : undefined;
}

/**
 * Lets a route that names a cached prefix go upstream. With gateway keys only a prefix the caller created through
 * the gateway does: any other name is 404, the provider's class for a name it does not know, and nothing is sent,
 * so a caller cannot tell another's name from one that never was. In pass-through the provider judges the
 * caller's own key.
 */
export async function checkOwnPrefixRoute(
  deps: OwnerDeps,
  call: UpstreamCall,
  name: string | undefined,
): Promise<void> {
  if (!gatewayGuardsPrefixes(deps)) return;
  const own = name === undefined ? undefined : await ownCachedPrefix(deps, call, name, deps.now().getTime());
  if (own === undefined) throw new GatewayError("NOT_FOUND", 404, upstreamErrorMessages.NOT_FOUND);
}

/** At most this many pages of a list are asked for in all, to find one that shows the caller any prefix. */
const maxListPages = 10;

/**
 * A provider's list of cached prefixes as the caller may see it: with gateway keys only those it created through
 * the gateway, so a page may be short. A page that would show none while the provider has a next one is followed
 * (`nextPage`, with the provider's token) up to `maxListPages` pages, so that a client's pager is not handed an
 * empty page that goes on; the page shown carries the next token of the last page asked for. In pass-through the
 * list goes as it came.
 */
export async function ownPrefixList(
  deps: OwnerDeps,
  call: UpstreamCall,
  first: JsonObject,
  reading: CachedPrefixList,
  nextPage: (token: string) => Promise<JsonObject | undefined>,
): Promise<JsonObject> {
  if (!gatewayGuardsPrefixes(deps)) return first;
  const now = deps.now().getTime();
  const principal = await call.caller.principal();
  let list = first;
  for (let pages = 1; ; pages++) {
    const names = reading.namesOf(list);
    const records = await Promise.all(names.map((name) => deps.store.getCachedPrefix(name, now)));
    const kept = new Set(names.filter((_name, index) => ownRecord(records[index], principal) !== undefined));
    const shown = reading.keeping(list, kept);
    const token = reading.nextPageToken(list);
    if (kept.size > 0 || token === undefined || pages >= maxListPages) return shown;
    const next = await nextPage(token);
    if (next === undefined) return shown;
    list = next;
  }
}
