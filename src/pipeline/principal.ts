import { hex } from "../json/sha256-hex.js";
import type { SecretStore } from "../store/store.js";

/** The HMAC key of each store, read (or made) once per process. */
const keys = new WeakMap<SecretStore, Promise<CryptoKey>>();

function keyOf(store: SecretStore): Promise<CryptoKey> {
  let key = keys.get(store);
  if (key === undefined) {
    key = store
      .secret("principal")
      .then((secret) =>
        crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
          "sign",
        ]),
      );
    // A store that failed to give its secret is asked again by the next call.
    key.catch(() => keys.delete(store));
    keys.set(store, key);
  }
  return key;
}

/**
 * Who a call is, as state may keep it: the HMAC-SHA256, under the store's own random key, of the first credential
 * the call presents (the gateway key, or in pass-through the client's provider key; none is one principal too).
 * Never the credential itself, and not reversible without the store's key.
 */
export async function principalOf(store: SecretStore, credential: string | undefined): Promise<string> {
  const key = await keyOf(store);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(credential ?? ""));
  return hex(new Uint8Array(mac));
}
