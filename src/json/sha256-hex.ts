/** Lowercase hex of bytes. */
export function hex(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += byte.toString(16).padStart(2, "0");
  return text;
}

/** SHA-256 of a text's UTF-8 bytes as lowercase hex, via Web Crypto (Node and Workers alike). */
export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
