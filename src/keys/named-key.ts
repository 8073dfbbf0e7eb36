import type { Limits } from "../policy/policy.js";

/**
 * A named key: who a caller is to the operator, and what it may do. The store keeps it, and a hash of its secret,
 * never the secret itself; a `keys.toml` beside the policies holds keys of the same shape (read-only through the API).
 */
export interface NamedKey {
  /** `key_` and 24 hex digits; the principal of the key's calls, so that its state survives a rotation. */
  id: string;
  name: string;
  /** The team it belongs to, an operator's label (metrics name it, bounded to the labels operators give). */
  team: string | undefined;
  /** The policy names the key may use, the first its default; empty: any, `PROMPTGATE_DEFAULT_POLICY` the default. */
  policies: readonly string[];
  /** Glob patterns (`*` any run of characters, `?` one) over the model a call reaches; empty: any model. */
  models: readonly string[];
  /**
   * Per provider (a surface's name), the environment variable (Workers: the secret binding) holding the server-held
   * credential its calls use instead of that provider's default one.
   */
  credentials: Readonly<Record<string, string>>;
  /** Limits over time, kept and shown as the operator gave them. */
  limits: Limits | undefined;
  /** Epoch milliseconds. */
  createdAt: number;
  /** When the key stops working (epoch milliseconds); undefined: never. */
  expiresAt: number | undefined;
  /** When the key was revoked (epoch milliseconds); undefined while it works. */
  revokedAt: number | undefined;
  /** The last time a call presented it, written at most once a minute (epoch milliseconds). */
  lastUsedAt: number | undefined;
  /** `api` for a key the admin API or CLI made (in the store), `file` for one of `keys.toml` (read-only). */
  source: "api" | "file";
}

/** What the admin may set on a key: every field but its id, times of use and source. */
export type KeySettings = Pick<
  NamedKey,
  "name" | "team" | "policies" | "models" | "credentials" | "limits" | "expiresAt"
>;

/** The fixed start of every secret, so that secret scanners recognise a leaked one. */
export const keySecretPrefix = "pg_";

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** A new key id. */
export function newKeyId(): string {
  return `key_${randomHex(12)}`;
}

/** A new secret: the prefix and 32 random bytes as hex. */
export function newKeySecret(): string {
  return `${keySecretPrefix}${randomHex(32)}`;
}

/** Whether a key works at `now`: neither revoked nor expired. */
export function keyWorks(key: NamedKey, now: number): boolean {
  return key.revokedAt === undefined && (key.expiresAt === undefined || key.expiresAt > now);
}

/** Whether a model name matches one of a key's globs (`*` any run of characters, `?` one); no globs: any model. */
export function modelAllowed(key: Pick<NamedKey, "models">, model: string): boolean {
  return key.models.length === 0 || key.models.some((glob) => globMatches(glob, model));
}

/** Whether a policy name is one a key may use; none listed: any. */
export function policyAllowed(key: Pick<NamedKey, "policies">, policyName: string): boolean {
  return key.policies.length === 0 || key.policies.includes(policyName);
}

/**
 * Whether `text` matches `glob`, where `*` is any run of characters and `?` one code point; every other character
 * stands for itself. Linear in their lengths (no backtracking blow-up on many stars).
 */
export function globMatches(glob: string, text: string): boolean {
  const pattern = Array.from(glob);
  const chars = Array.from(text);
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < chars.length) {
    if (p < pattern.length && (pattern[p] === "?" || (pattern[p] !== "*" && pattern[p] === chars[t]))) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p;
      resume = t;
      p += 1;
    } else if (star !== -1) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p += 1;
  return p === pattern.length;
}

/** A key of `keys.toml`: the key (its `source` is `file`) and the SHA-256 (lowercase hex) of its secret. */
export interface FileKey {
  key: NamedKey;
  secretSha256: string;
}

/** The named keys a gateway knows: those of `keys.toml`, and the store's as it last read them. */
export interface KeyRing {
  /**
   * Whether a secret's SHA-256 is that of an unnamed key (`PROMPTGATE_KEYS`), compared in constant time against every
   * one, whose digests are made once.
   */
  isUnnamedKey(secretSha256: string): Promise<boolean>;
  /** The keys of `keys.toml` as last loaded (replaced when the policies are reloaded). */
  fileKeys(): readonly FileKey[];
  /**
   * The key a secret's SHA-256 opens at `now` (epoch ms), from the file or the store; undefined for none. Revoked and
   * expired keys are returned as such. Every node sees a key made, changed or revoked on another within a second.
   */
  keyOfSecret(secretSha256: string, now: number): Promise<NamedKey | undefined>;
  /** Notes that a call presented a key at `now`; the store is written at most once a minute per key. */
  noteUse(key: NamedKey, now: number): Promise<void>;
  /** Forgets the store's answers read so far: a key changed through this gateway counts here at once. */
  forgetStoreAnswers(): void;
}
