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
