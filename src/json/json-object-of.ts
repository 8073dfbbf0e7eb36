const decoder = new TextDecoder();

/** The JSON object a text or its UTF-8 bytes hold; undefined when it is not JSON or not an object. */
export function jsonObjectOf(source: string | Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(typeof source === "string" ? source : decoder.decode(source));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
