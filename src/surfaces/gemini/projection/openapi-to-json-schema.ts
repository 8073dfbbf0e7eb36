/**
 * The reverse of what Gemini's `responseSchema` (an OpenAPI 3.0 subset) does to a JSON Schema,
 * so a schema received in that form can be validated or faked with JSON Schema tools.
 */

type SchemaNode = Record<string, unknown>;

/** Keywords that OpenAPI carries but JSON Schema validators reject or misread. */
const droppedKeywords = new Set(["nullable", "propertyOrdering", "example"]);

/** Count keywords that Gemini serialises as proto int64, i.e. sometimes as strings. */
const countKeywords = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]);

/**
 * Turns a Gemini `responseSchema` into JSON Schema: lowercase types, `nullable` as a null
 * type (or null branch, or null enum member), no `format: "enum"`, `propertyOrdering` or
 * `example`, numeric count keywords. Never mutates its input; anything not a schema object
 * is returned as a copy.
 */
export function openApiToJsonSchema(schema: unknown): unknown {
  if (!isSchemaNode(schema)) return structuredClone(schema);
  const result: SchemaNode = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (droppedKeywords.has(keyword)) continue;
    result[keyword] = convertKeyword(keyword, value);
  }
  if (result.type === undefined) delete result.type;
  if (result.format === "enum") delete result.format;
  if (Array.isArray(result.enum)) result.enum = enumValuesFor(result.type, result.enum);
  if (schema.nullable === true) allowNull(result);
  return result;
}

function convertKeyword(keyword: string, value: unknown): unknown {
  switch (keyword) {
    case "type":
      return convertType(value);
    case "properties":
      return isSchemaNode(value) ? mapValues(value, openApiToJsonSchema) : structuredClone(value);
    case "items":
      return openApiToJsonSchema(value);
    case "anyOf":
      return Array.isArray(value) ? value.map(openApiToJsonSchema) : structuredClone(value);
    default:
      return countKeywords.has(keyword) ? toCount(value) : structuredClone(value);
  }
}

/** `"STRING"` → `"string"`; `TYPE_UNSPECIFIED` means no type constraint at all. */
function convertType(value: unknown): unknown {
  if (typeof value === "string") return value === "TYPE_UNSPECIFIED" ? undefined : value.toLowerCase();
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? item.toLowerCase() : item));
  return structuredClone(value);
}

function toCount(value: unknown): unknown {
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value);
  return value;
}

/** Gemini enums are strings; a numeric or boolean enum arrives stringified and goes back here. */
function enumValuesFor(type: unknown, values: unknown[]): unknown[] {
  if (type === "integer" || type === "number") {
    return values.map((value) =>
      typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value,
    );
  }
  if (type === "boolean") return values.map((value) => (value === "true" ? true : value === "false" ? false : value));
  return values;
}

/** Widens a converted node so that it also accepts `null`, in the form that node allows. */
function allowNull(node: SchemaNode): void {
  if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
  if (typeof node.type === "string") {
    if (node.type !== "null") node.type = [node.type, "null"];
  } else if (Array.isArray(node.type)) {
    if (!node.type.includes("null")) node.type = [...node.type, "null"];
  } else if (Array.isArray(node.anyOf)) {
    const hasNullBranch = node.anyOf.some((branch) => isSchemaNode(branch) && branch.type === "null");
    if (!hasNullBranch) node.anyOf = [...node.anyOf, { type: "null" }];
  }
}

function mapValues(record: SchemaNode, convert: (value: unknown) => unknown): SchemaNode {
  const result: SchemaNode = {};
  for (const [key, value] of Object.entries(record)) result[key] = convert(value);
  return result;
}

function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
