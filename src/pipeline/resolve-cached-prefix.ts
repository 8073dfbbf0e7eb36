import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { canonicalJson } from "../json/canonical-json.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import { sha256Hex } from "../json/sha256-hex.js";
import type { LogicalCall } from "../logical-call.js";
import type { PolicyVersion } from "../policy/policy.js";
import { type CachedPrefix, noCachedPrefix } from "../window/prompt-size.js";
import { gatewayGuardsPrefixes, ownCachedPrefix } from "./cached-prefix-owner.js";
import { isSuccess } from "./relay-response.js";
import { sendUpstream } from "./send-upstream.js";
import type { UpstreamCall } from "./upstream-call.js";

/** Where the call came from, for the provider request an estimate needs. */
export interface PrefixContext {
  call: UpstreamCall;
  /** The route path below the surface's mount. */
  path: string;
}

function unknownPrefix(): GatewayError {
  return new GatewayError(
    "CACHE_PREFIX_UNKNOWN",
    400,
    "The request refers to a cached prefix or stored response the gateway cannot measure; nothing was sent.",
  );
}

/**
 * The size of the prefix a call refers to: a cached content the caller created through the gateway, or a stored
 * response history the gateway recorded when it was made (a background response's once its output is known). An
 * unknown one (a cached content another principal created is one) gets the policy's choice: `reject`, or `estimate`
 * from the provider's own token count at the policy's characters per token; with gateway keys an unknown cached
 * content is always refused (see `gatewayGuardsPrefixes`).
 */
export async function resolveCachedPrefix(
  deps: Deps,
  call: LogicalCall,
  policy: PolicyVersion,
  context: PrefixContext,
): Promise<CachedPrefix> {
  const reference = call.cachedPrefix;
  if (reference === undefined) return noCachedPrefix;
  const now = deps.now().getTime();
  if (reference.kind === "cached-content") {
    const record = await ownCachedPrefix(deps, context.call, reference.id, now);
    if (record !== undefined) {
      const schemaHash =
        call.responseSchema === undefined ? undefined : await sha256Hex(canonicalJson(call.responseSchema));
      return { chars: record.chars, estimated: false, containsSchema: record.schemaHashes.includes(schemaHash ?? "") };
    }
    // With gateway keys every caller shares the provider key: asking the provider about the name, or sending the
    // call, could reach a cache that is not the caller's. Refused whatever the policy.
    if (gatewayGuardsPrefixes(deps)) throw unknownPrefix();
  } else if (reference.kind === "previous-response") {
    const record = await ownResponseHistory(deps, context.call, reference.id, now);
    // A background response the gateway has not seen ended has an output of unknown size: as unknown as an unseen id.
    if (record?.outputKnown) return { chars: record.chars, estimated: false, containsSchema: false };
    // With gateway keys the provider would count another principal's response under the key all callers share.
    if (gatewayGuardsPrefixes(deps)) throw unknownPrefix();
  }
  if (policy.policy.cache.unknown_prefix === "reject") throw unknownPrefix();
  const tokens = await providerTokenCount(deps, context, reference);
  return { chars: Math.ceil(tokens * policy.policy.cache.chars_per_token), estimated: true, containsSchema: false };
}

/**
 * The recorded history of a stored response, unless it is a turn of another principal's session: that one is as
 * unknown as an unseen id, so that a caller learns neither that it exists nor its size.
 */
async function ownResponseHistory(deps: Deps, call: UpstreamCall, id: string, now: number) {
  const record = await deps.store.getResponseHistory(id, now);
  if (record?.session === undefined) return record;
  const session = await deps.store.getSession(record.session);
  return session !== undefined && session.principal === (await call.caller.principal()) ? record : undefined;
}

async function providerTokenCount(
  deps: Deps,
  context: PrefixContext,
  reference: NonNullable<LogicalCall["cachedPrefix"]>,
): Promise<number> {
  const { call, path } = context;
  const lookup = call.surface.prefixTokenCount?.(reference, path);
  if (lookup === undefined) throw unknownPrefix();
  const response = await sendUpstream(deps, call, lookup.path, undefined, "GET");
  const bytes = await response.bytes();
  if (!isSuccess(response.status)) throw unknownPrefix();
  const body = jsonObjectOf(bytes);
  const tokens = body === undefined ? undefined : lookup.tokensOf(body);
  if (tokens === undefined || !Number.isFinite(tokens) || tokens < 0) throw unknownPrefix();
  return tokens;
}
