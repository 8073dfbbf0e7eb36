import { isObject } from "../json/json-object.js";
import { sha256Hex } from "../json/sha256-hex.js";
import { type KeyObject, keyObject } from "../keys/key-object.js";
import { type KeySettingsContext, KeySettingsError, readKeySettings } from "../keys/key-settings.js";
import { type FileKey, type NamedKey, newKeyId, newKeySecret } from "../keys/named-key.js";
import { keyScope, policyScope, type WindowStatus, windowStatus } from "../limits/admission.js";
import { deadlineSecondsOf, defaultDeadlineSeconds, type Policy } from "../policy/policy.js";
import type { KeyStore, LimitStore } from "../store/store.js";

/** The longest grace a rotation may give the earlier secrets: 30 days, in seconds. */
export const maxGraceSeconds = 30 * 24 * 60 * 60;

/**
 * What managing named keys works on, the same for the admin API and the CLI: the store's keys, the keys of
 * `keys.toml` (read-only), the clock, and what checking a key's settings needs to know.
 */
export interface KeyAdmin {
  store: KeyStore;
  fileKeys(): readonly FileKey[];
  /** The current time, epoch milliseconds. */
  now(): number;
  /** The known policy names, provider names, and whether a credential's variable is set. */
  settingsContext(): Omit<KeySettingsContext, "now">;
}

/** Why a key cannot be managed as asked. */
export type KeyAdminFailure =
  /** The request's settings or arguments cannot be taken (`field` names the one at fault). */
  | "invalid"
  /** No key has the id. */
  | "not_found"
  /** The key is one of `keys.toml`: it is changed there. */
  | "read_only"
  /** The key is revoked, so a new secret would open nothing. */
  | "revoked";

/** A refusal of a key operation: its kind, a message for the operator, and the field at fault when there is one. */
export class KeyAdminError extends Error {
  override readonly name = "KeyAdminError";

  constructor(
    readonly failure: KeyAdminFailure,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }

  static isInstance(value: unknown): value is KeyAdminError {
    return value instanceof KeyAdminError;
  }
}

/** The answer to a new key: its id and secret (the only time the secret is shown), then the key object. */
export type CreatedKey = { id: string; key: string } & Omit<KeyObject, "id">;

/** The answer to a rotation: the key's id and its new secret. */
export interface RotatedKey {
  id: string;
  key: string;
}

/**
 * Makes a key from its settings (`name` required; see `readKeySettings`) and a new secret; the store receives only
 * the secret's SHA-256. Answers the secret once, with the key object.
 */
export async function createKey(admin: KeyAdmin, body: unknown): Promise<CreatedKey> {
  const now = admin.now();
  const settings = checkedSettings(() =>
    readKeySettings(body, { ...admin.settingsContext(), now }, { kind: "create" }),
  );
  const key: NamedKey = {
    ...settings,
    id: newKeyId(),
    createdAt: now,
    revokedAt: undefined,
    lastUsedAt: undefined,
    source: "api",
  };
  const secret = newKeySecret();
  await admin.store.putKey(key, await sha256Hex(secret));
  const { id, ...shown } = keyObject(key);
  return { id, key: secret, ...shown };
}

/** Every key: the store's in the order they were made, then those of `keys.toml` in the file's order. */
export async function listKeys(admin: KeyAdmin): Promise<{ data: KeyObject[] }> {
  const stored = await admin.store.listKeys();
  return { data: [...stored, ...admin.fileKeys().map((fileKey) => fileKey.key)].map(keyObject) };
}

/** One key by its id, from the store or `keys.toml`. */
export async function getKey(admin: KeyAdmin, id: string): Promise<KeyObject> {
  return keyObject(await anyKey(admin, id));
}

/** A key of the store or of `keys.toml` by id; not found: 404. */
async function anyKey(admin: KeyAdmin, id: string): Promise<NamedKey> {
  const key = (await admin.store.getKey(id)) ?? admin.fileKeys().find((fileKey) => fileKey.key.id === id)?.key;
  if (key === undefined) throw notFound();
  return key;
}

/** A window of a key's limits as the admin API shows it; a window of a policy's limits names the policy. */
export type KeyWindow = WindowStatus & { policy?: string };

/** What reading a key's windows uses besides the keys: the counters, and the policies the key may use. */
export interface KeyLimitsContext {
  store: LimitStore;
  /** The current version of a policy name; undefined when no policy has the name (any more). */
  policy(name: string): Policy | undefined;
  /** The policy a call that names none runs under (`PROMPTGATE_DEFAULT_POLICY`). */
  defaultPolicy: string;
}

/**
 * The use of a key's windows now: those of its own limits (counted across its policies), then, for every policy the
 * key may use (its `policies`, or the default policy when it names none) that has limits, that policy's windows as
 * they count for the key (its principal is its id), each naming the policy. A key of `keys.toml` alike.
 */
export async function keyLimits(
  admin: KeyAdmin,
  id: string,
  context: KeyLimitsContext,
): Promise<{ windows: KeyWindow[] }> {
  const key = await anyKey(admin, id);
  const now = admin.now();
  const windows: KeyWindow[] = [];
  if (key.limits !== undefined) {
    const scope = { scope: keyScope(key.id), limits: key.limits };
    windows.push(...(await windowStatus(context.store, scope, now, defaultDeadlineSeconds * 1000)));
  }
  const names = key.policies.length === 0 ? [context.defaultPolicy] : key.policies;
  for (const name of new Set(names)) {
    const policy = context.policy(name);
    if (policy?.limits === undefined) continue;
    const scope = { scope: policyScope(policy.name, key.id), limits: policy.limits };
    const statuses = await windowStatus(context.store, scope, now, deadlineSecondsOf(policy) * 1000);
    for (const status of statuses) windows.push({ ...status, policy: policy.name });
  }
  return { windows };
}

/** Changes a key's settings: the members `body` gives replace the key's, `null` clears an optional one. */
export async function updateKey(admin: KeyAdmin, id: string, body: unknown): Promise<KeyObject> {
  const current = await storedKey(admin, id);
  const context = { ...admin.settingsContext(), now: admin.now() };
  const settings = checkedSettings(() => readKeySettings(body, context, { kind: "update", current }));
  const updated = await admin.store.updateKey(id, settings);
  if (updated === undefined) throw notFound();
  return keyObject(updated);
}

/** Revokes a key now (a key revoked before keeps its first time); answers the key object. */
export async function revokeKey(admin: KeyAdmin, id: string): Promise<KeyObject> {
  await storedKey(admin, id);
  const revoked = await admin.store.revokeKey(id, admin.now());
  if (revoked === undefined) throw notFound();
  return keyObject(revoked);
}

/**
 * Gives a key a new secret; its earlier secrets keep opening it for `grace_seconds` (0 to 30 days, default 0) from
 * now. `body` is `{"grace_seconds": N}` or undefined. The store receives only the new secret's SHA-256.
 */
export async function rotateKey(admin: KeyAdmin, id: string, body: unknown): Promise<RotatedKey> {
  const graceSeconds = readGraceSeconds(body);
  const key = await storedKey(admin, id);
  if (key.revokedAt !== undefined) {
    throw new KeyAdminError("revoked", `The key ${id} is revoked: a revoked key cannot be rotated; create a new one.`);
  }
  const secret = newKeySecret();
  const rotated = await admin.store.rotateKey(id, await sha256Hex(secret), admin.now() + graceSeconds * 1000);
  if (!rotated) throw notFound();
  return { id, key: secret };
}

/** The grace of a rotation's body, in seconds; refuses anything but `{"grace_seconds": 0..30 days}` or no body. */
export function readGraceSeconds(body: unknown): number {
  if (body === undefined) return 0;
  if (!isObject(body)) throw new KeyAdminError("invalid", "The rotation's body must be a JSON object.");
  for (const member of Object.keys(body)) {
    if (member !== "grace_seconds") {
      throw new KeyAdminError("invalid", `${member} is not a member of a rotation (it takes grace_seconds).`, member);
    }
  }
  const grace = body.grace_seconds ?? 0;
  if (typeof grace !== "number" || !Number.isSafeInteger(grace) || grace < 0 || grace > maxGraceSeconds) {
    throw new KeyAdminError(
      "invalid",
      `grace_seconds must be an integer from 0 to ${maxGraceSeconds} (30 days).`,
      "grace_seconds",
    );
  }
  return grace;
}

/** The key a change acts on: one of the store's; a key of `keys.toml` is read-only. */
async function storedKey(admin: KeyAdmin, id: string): Promise<NamedKey> {
  const key = await admin.store.getKey(id);
  if (key !== undefined) return key;
  if (admin.fileKeys().some((fileKey) => fileKey.key.id === id)) {
    throw new KeyAdminError(
      "read_only",
      `The key ${id} is managed in keys.toml: change, revoke or rotate it there, then reload the policies.`,
    );
  }
  throw notFound();
}

function notFound(): KeyAdminError {
  return new KeyAdminError("not_found", "No key has this id.");
}

/** Runs a settings check, its refusal as a KeyAdminError naming the field. */
function checkedSettings<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!KeySettingsError.isInstance(error)) throw error;
    const message = error.field === "(root)" ? error.reason : `The key setting ${error.field} ${error.reason}.`;
    throw new KeyAdminError("invalid", message, error.field);
  }
}
