/**
 * Field names a log line must never hold, whatever their case: a credential or a request's headers added to a line
 * by mistake. A line's own fields are identifiers and numbers by their types; this is the guard behind them.
 */
const topLevel = new Set(["authorization", "key", "api_key", "headers"]);
/** Within a member object of the line (`line.upstream.key`). */
const nested = new Set(["authorization", "key"]);

/**
 * The line without the fields named above, at its top level and one level down. The line itself when it holds none
 * (the common case, which allocates nothing); otherwise a copy, so that the caller's object is never changed.
 */
export function withoutCredentialFields<T extends object>(line: T): T {
  const fields = line as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    if (named(topLevel, name)) {
      copy ??= { ...fields };
      delete copy[name];
      continue;
    }
    const value = fields[name];
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    let inner: Record<string, unknown> | undefined;
    for (const innerName in value) {
      if (Object.hasOwn(value, innerName) && named(nested, innerName)) {
        inner ??= { ...value };
        delete inner[innerName];
      }
    }
    if (inner !== undefined) {
      copy ??= { ...fields };
      copy[name] = inner;
    }
  }
  return (copy ?? line) as T;
}

/** Whether `name` is one of `names` in any case. */
function named(names: ReadonlySet<string>, name: string): boolean {
  return names.has(name.toLowerCase());
}
