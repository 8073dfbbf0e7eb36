import { hex } from "../json/sha256-hex.js";

/** Random bytes drawn from the CSPRNG in one call for 512 refs; each ref takes the next 8. */
const pool = new Uint8Array(4_096);
let used = pool.length;

/** A fresh call reference: `ref_` plus 16 lowercase hex digits from a CSPRNG. */
export function newRef(): string {
  if (used === pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  used += 8;
  return `ref_${hex(pool.subarray(used - 8, used))}`;
}
