import { hex } from "../json/sha256-hex.js";

/** A fresh call reference: `ref_` plus 16 lowercase hex digits from a CSPRNG. */
export function newRef(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return `ref_${hex(bytes)}`;
}
