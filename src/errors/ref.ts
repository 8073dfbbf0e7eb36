/** A fresh call reference: `ref_` plus 16 lowercase hex digits from a CSPRNG. */
export function newRef(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return `ref_${hex}`;
}
