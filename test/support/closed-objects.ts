/**
 * The projection as Gemini's constrained decoding reads it: an object with listed properties
 * and no map gets no other property. A projection that lost a property fails here, not in plain
 * JSON Schema. Definitions are read the same way.
 */
export function closedObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedObjects);
  if (typeof schema !== "object" || schema === null) return schema;
  const closed: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if ((keyword === "properties" || keyword === "$defs") && typeof value === "object" && value !== null) {
      closed[keyword] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, closedObjects(child)]));
    } else if (keyword === "items" || keyword === "anyOf" || keyword === "additionalProperties") {
      closed[keyword] = closedObjects(value);
    } else {
      closed[keyword] = value;
    }
  }
  if ("properties" in closed && !("additionalProperties" in closed)) closed.additionalProperties = false;
  return closed;
}
