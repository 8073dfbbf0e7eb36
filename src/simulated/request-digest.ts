import { sha256Hex } from "../json/sha256-hex.js";

/** SHA-256 of the raw request body as lowercase hex; the root of every simulated id and seed. */
export function requestDigest(body: string): Promise<string> {
  return sha256Hex(body);
}

/** A 32-bit faker seed taken from the digest, so equal requests fake equal documents. */
export function seedFromDigest(digest: string): number {
  return Number.parseInt(digest.slice(0, 8), 16);
}

/** A fixed creation time (2026-01-01T00:00:00Z) so that equal requests give equal bodies. */
export const simulatedCreatedAt = 1_767_225_600;

/** The characters of the providers' ids: letters and digits, base58 (no 0, O, I, l), URL-safe base64. */
export const idAlphabets = {
  alphanumeric: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
  base58: "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
  base64url: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
} as const;

/**
 * `length` characters of `alphabet` taken from the digest's bytes from byte `offset` on (wrapping
 * round), so that a simulated id has the provider's format and equal requests get equal ids.
 */
export function idFromDigest(digest: string, length: number, alphabet: string, offset = 0): string {
  const bytes = digest.length / 2;
  let id = "";
  for (let index = 0; index < length; index++) {
    const at = ((offset + index) % bytes) * 2;
    id += alphabet[Number.parseInt(digest.slice(at, at + 2), 16) % alphabet.length];
  }
  return id;
}

/** `length` random characters of `alphabet`, for the ids of answers that have no request digest (errors). */
export function randomId(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return idFromDigest(Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join(""), length, alphabet);
}
