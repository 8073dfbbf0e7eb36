import type { Config } from "../config.js";
import { hashesEqual } from "../http/keys.js";
import { sha256Hex } from "../json/sha256-hex.js";
import type { FileKey, KeyRing, NamedKey } from "../keys/named-key.js";
import type { KeyStore } from "../store/store.js";

/** How long a store's answer for a secret is used again: a key made or revoked elsewhere counts within this time. */
const answerMilliseconds = 1_000;
/** How often a key's last use is written to the store at most. */
const touchMilliseconds = 60_000;
/** The most store answers kept at once: an unknown secret's answer too, so that a flood of them costs one map. */
const keptAnswers = 10_000;

/** A key ring whose file keys a reload replaces. */
export interface ReloadableKeyRing extends KeyRing {
  replaceFileKeys(keys: readonly FileKey[]): void;
}

/**
 * The key ring of a gateway: the file's keys, and the store's, whose answers are kept a second, so that a call does
 * not ask the store each time while a key revoked on another node stops working within a second.
 */
export function createKeyRing(options: {
  store: KeyStore;
  /** The unnamed keys (`PROMPTGATE_KEYS`). */
  unnamedKeys: readonly string[];
  fileKeys: readonly FileKey[];
}): ReloadableKeyRing {
  const { store } = options;
  let unnamedDigests: Promise<string[]> | undefined;
  let fileKeys = options.fileKeys;
  let fileBySecret = bySecret(fileKeys);
  const answers = new Map<string, { key: NamedKey | undefined; until: number }>();
  const touched = new Map<string, number>();
  return {
    async isUnnamedKey(secretSha256) {
      unnamedDigests ??= Promise.all(options.unnamedKeys.map(sha256Hex));
      let unnamed = false;
      for (const digest of await unnamedDigests) if (hashesEqual(secretSha256, digest)) unnamed = true;
      return unnamed;
    },
    fileKeys: () => fileKeys,
    replaceFileKeys(keys) {
      fileKeys = keys;
      fileBySecret = bySecret(keys);
    },
    async keyOfSecret(secretSha256, now) {
      const fromFile = fileBySecret.get(secretSha256);
      if (fromFile !== undefined) return fromFile;
      const kept = answers.get(secretSha256);
      if (kept !== undefined && kept.until > now) return kept.key;
      const key = await store.keyOfSecret(secretSha256, now);
      if (answers.size >= keptAnswers) answers.clear();
      answers.set(secretSha256, { key, until: now + answerMilliseconds });
      return key;
    },
    forgetStoreAnswers() {
      answers.clear();
    },
    async noteUse(key, now) {
      if (key.source !== "api") return;
      const last = Math.max(touched.get(key.id) ?? 0, key.lastUsedAt ?? 0);
      if (now - last < touchMilliseconds) return;
      if (touched.size >= keptAnswers) touched.clear();
      touched.set(key.id, now);
      await store.touchKey(key.id, now);
    },
  };
}

function bySecret(keys: readonly FileKey[]): ReadonlyMap<string, NamedKey> {
  return new Map(keys.map((fileKey) => [fileKey.secretSha256, fileKey.key]));
}

/**
 * The configuration a gateway starts with: gateway-key mode on, besides where the configuration asks for it, when the
 * store or `keys.toml` holds a named key (revoked ones too). Decided once, at start-up: revoking the last key never
 * turns a running gateway into pass-through.
 */
export async function withStartUpKeyMode(
  config: Config,
  store: KeyStore,
  fileKeys: readonly FileKey[],
): Promise<Config> {
  if (config.gatewayKeyMode) return config;
  const named = fileKeys.length > 0 || (await store.listKeys()).length > 0;
  return named ? { ...config, gatewayKeyMode: true } : config;
}
