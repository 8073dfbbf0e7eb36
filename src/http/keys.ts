import { sha256Hex } from "../json/sha256-hex.js";

/**
 * Whether a presented key equals the expected one, in time that does not depend on where
 * they differ: both are hashed to the same length first, then compared in full.
 */
export async function keysEqual(presented: string, expected: string): Promise<boolean> {
  const [left, right] = await Promise.all([sha256Hex(presented), sha256Hex(expected)]);
  return hashesEqual(left, right);
}

/** Whether two SHA-256 hex digests are equal, in time that does not depend on where they differ. */
export function hashesEqual(left: string, right: string): boolean {
  let difference = left.length ^ right.length;
  for (let index = 0; index < left.length; index++) difference |= left.charCodeAt(index) ^ right.charCodeAt(index);
  return difference === 0;
}

/** The bearer token of an `Authorization` header, if it has one. */
export function bearerToken(authorization: string | null): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  return match?.[1]?.trim();
}
