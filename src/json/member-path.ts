const identifier = /^[A-Za-z_$][\w$]{0,63}$/;

/** At most `length` UTF-16 units of `text` from its start, not splitting a surrogate pair, marked when cut. */
export function cutText(text: string, length: number): string {
  if (text.length <= length) return text;
  const unit = text.charCodeAt(length - 1);
  const end = unit >= 0xd800 && unit <= 0xdbff ? length - 1 : length;
  return `${text.slice(0, end)}…`;
}

/**
 * The JSON path of a member, as every message and record names fields: `a.b` for a name, and
 * `a["…"]` (the key cut to 64 characters) for any other key, so a path never carries a long value.
 */
export function memberPath(path: string, key: string): string {
  if (identifier.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(cutText(key, 64))}]`;
}
