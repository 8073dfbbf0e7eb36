/**
 * The header by which the gateway tells the simulated provider, and only it, the full response schema of a call whose
 * provider receives a projection of it (Gemini): the stand-in then answers what the full schema admits, as a model
 * that follows the whole schema would. URI-encoded compact JSON, since a header value holds no line breaks and only
 * Latin-1. A real provider is never sent it.
 */
export const toldSchemaHeader = "x-promptgate-simulated-schema";

/** The header's value for a schema. */
export function toldSchemaValue(schema: unknown): string {
  return encodeURIComponent(JSON.stringify(schema));
}

/** The schema a request's header tells, or undefined when it carries none or one that does not decode. */
export function toldSchema(headers: Headers): unknown {
  const value = headers.get(toldSchemaHeader);
  if (value === null) return undefined;
  try {
    return JSON.parse(decodeURIComponent(value));
  } catch {
    return undefined;
  }
}
