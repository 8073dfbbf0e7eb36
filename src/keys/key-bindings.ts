import { GatewayError } from "../errors/gateway-error.js";
import { modelAllowed, type NamedKey, policyAllowed } from "./named-key.js";

/** The policy name of a policy reference: a name, or `name@` and a version. */
function policyNameOf(policyRef: string): string {
  const at = policyRef.lastIndexOf("@");
  return at === -1 ? policyRef : policyRef.slice(0, at);
}

/**
 * The policy reference a call of a key runs under: the one its URL names, which must name a policy the key may use
 * (a version of one included), else the key's first policy, else the gateway's default. 403 `POLICY_NOT_ALLOWED`,
 * naming the key's policies, for any other.
 */
export function boundPolicyRef(key: NamedKey | undefined, policyRef: string | undefined): string | undefined {
  if (key === undefined || key.policies.length === 0) return policyRef;
  if (policyRef === undefined) return key.policies[0];
  if (policyAllowed(key, policyNameOf(policyRef))) return policyRef;
  throw new GatewayError(
    "POLICY_NOT_ALLOWED",
    403,
    `This key may use only the policies ${key.policies.join(", ")}; nothing was sent.`,
  );
}

/** Whether a key may reach a model (a fallback is tried only then); without a key or globs, any. */
export function mayReach(key: NamedKey | undefined, model: string | undefined): boolean {
  return key === undefined || key.models.length === 0 || (model !== undefined && modelAllowed(key, model));
}

/**
 * Refuses a model a key may not reach (its globs), whether the client asked for it or the gateway would reach it (a
 * fallback, a session's model): 403 `MODEL_NOT_ALLOWED`, naming the key's globs.
 */
export function checkModelAllowed(key: NamedKey | undefined, model: string | undefined): void {
  if (key === undefined || mayReach(key, model)) return;
  throw new GatewayError(
    "MODEL_NOT_ALLOWED",
    403,
    `This key may reach only the models ${key.models.join(", ")}; nothing was sent.`,
    { param: "model" },
  );
}

/**
 * The name the store keeps a case under: a named key's cases are its own (its id, a line break, the case id), every
 * other caller's are shared, as the case id. A line break never appears in a case id (printable ASCII only), so a
 * key's case never meets another's.
 */
export function scopedCase(keyId: string | undefined, caseId: string): string {
  return keyId === undefined ? caseId : `${keyId}\n${caseId}`;
}
