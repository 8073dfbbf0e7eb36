import { hex } from "../json/sha256-hex.js";
import type { SecretStore } from "../store/store.js";

/** A runtime's synchronous HMAC-SHA256 of `text` under `key` (both UTF-8), as lowercase hex. */
export type HmacSha256 = (key: string, text: string) => string;

/** The principal secret of each store, read (or made) once per process. */
const secrets = new WeakMap<SecretStore, Promise<string>>();
/** The same as WebCrypto's HMAC key, where the runtime has no synchronous HMAC. */
const keys = new WeakMap<SecretStore, Promise<CryptoKey>>();

function secretOf(store: SecretStore): Promise<string> {
  let secret = secrets.get(store);
  if (secret === undefined) {
    secret = store.secret("principal");
    // A store that failed to give its secret is asked again by the next call.
    secret.catch(() => secrets.delete(store));
    secrets.set(store, secret);
  }
  return secret;
}

function keyOf(store: SecretStore): Promise<CryptoKey> {
  let key = keys.get(store);
  if (key === undefined) {
    key = secretOf(store).then((secret) =>
      crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
      ]),
    );
    key.catch(() => keys.delete(store));
    keys.set(store, key);
  }
  return key;
}

/**
 * Who a call is, as state may keep it: the HMAC-SHA256, under the store's own random key, of the first credential
 * the call presents (the gateway key, or in pass-through the client's provider key; none is one principal too).
 * Never the credential itself, and not reversible without the store's key. With the runtime's synchronous `hmac`
 * (Node's) where it has one, else WebCrypto's: the same value either way.
 */
export async function principalOf(
  store: SecretStore,
  credential: string | undefined,
  hmac?: HmacSha256,
): Promise<string> {
  if (hmac !== undefined) return hmac(await secretOf(store), credential ?? "");
  const key = await keyOf(store);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(credential ?? ""));
  return hex(new Uint8Array(mac));
}
