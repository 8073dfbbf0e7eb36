/** Whether `kept` holds the bytes of `bytes` from `start` to `end`, four at a time where both fall alike on words. */
export function sameBytes(kept: Uint8Array, bytes: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (kept.length !== length) return false;
  let at = 0;
  const offset = bytes.byteOffset + start;
  if (((offset - kept.byteOffset) & 3) === 0) {
    for (; ((offset + at) & 3) !== 0 && at < length; at++) if (kept[at] !== bytes[start + at]) return false;
    const words = (length - at) >> 2;
    const left = new Uint32Array(kept.buffer, kept.byteOffset + at, words);
    const right = new Uint32Array(bytes.buffer, offset + at, words);
    for (let word = 0; word < words; word++) if (left[word] !== right[word]) return false;
    at += words << 2;
  }
  for (; at < length; at++) if (kept[at] !== bytes[start + at]) return false;
  return true;
}

/** FNV-1a in four lanes (a byte each, combined at the end), about three times the speed of one lane. */
export function bytesHash(bytes: Uint8Array, start: number, end: number): number {
  let a = 0x811c9dc5 | 0;
  let b = a;
  let c = a;
  let d = a;
  let at = start;
  for (; at + 3 < end; at += 4) {
    a = Math.imul(a ^ (bytes[at] as number), 16777619);
    b = Math.imul(b ^ (bytes[at + 1] as number), 16777619);
    c = Math.imul(c ^ (bytes[at + 2] as number), 16777619);
    d = Math.imul(d ^ (bytes[at + 3] as number), 16777619);
  }
  for (; at < end; at++) a = Math.imul(a ^ (bytes[at] as number), 16777619);
  return (a ^ Math.imul(b, 3) ^ Math.imul(c, 5) ^ Math.imul(d, 7) ^ (end - start)) >>> 0;
}
