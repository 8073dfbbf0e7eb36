import type { Deps } from "../deps.js";
import { sha256Hex } from "../json/sha256-hex.js";
import { keyWorks, type NamedKey } from "../keys/named-key.js";
import { principalOf } from "./principal.js";

/** Who a request is, once its key is checked. */
export interface Caller {
  /**
   * Who state is kept for: a named key's id (so that its sessions, jobs and caches survive a rotation), else the keyed
   * hash of the credential presented (an unnamed gateway key, or in pass-through the client's provider key), made
   * when first asked for: most calls keep no state, and the hash costs each call that makes it.
   */
  principal(): Promise<string>;
  /** The named key presented, which decides the policies, models and credentials the call may use. */
  key: NamedKey | undefined;
}

/** What telling a caller uses of the gateway. */
type CallerDeps = Pick<Deps, "config" | "store" | "keyRing" | "now" | "hmacSha256">;

/**
 * The caller a presented credential (the first a request presents on its surface) is, or undefined when it may not
 * go on. In pass-through anyone may (the provider judges the client's own key). With gateway keys, an unnamed key
 * (`PROMPTGATE_KEYS`, compared in constant time against every one) or a named key that is neither revoked nor
 * expired; any other credential, or none, may not.
 */
export async function identifyCaller(deps: CallerDeps, presented: string | undefined): Promise<Caller | undefined> {
  if (!deps.config.gatewayKeyMode) return hashedCaller(deps, presented);
  if (presented === undefined) return undefined;
  const digest = await sha256Hex(presented);
  if (await deps.keyRing.isUnnamedKey(digest)) return hashedCaller(deps, presented);
  const now = deps.now().getTime();
  const key = await deps.keyRing.keyOfSecret(digest, now);
  if (key === undefined || !keyWorks(key, now)) return undefined;
  await deps.keyRing.noteUse(key, now);
  const principal = Promise.resolve(key.id);
  return { principal: () => principal, key };
}

/** A caller known by the keyed hash of its credential, made once when first asked for. */
function hashedCaller(deps: CallerDeps, credential: string | undefined): Caller {
  let principal: Promise<string> | undefined;
  return {
    principal: () => {
      principal ??= principalOf(deps.store, credential, deps.hmacSha256);
      return principal;
    },
    key: undefined,
  };
}
