import type { JsonObject } from "../../json/json-object.js";
import type { RefusalText } from "../../schema/schema-refusal.js";
import { quotedWords } from "../../schema/schema-refusal.js";
import { errorMessageOf } from "../error-message.js";

/** What tells Gemini's refusal of the response schema from its other 400s. */
const aboutSchema = /response_?(json_?)?schema|schema in generation_?config|nesting depth|too many states/i;

/**
 * Reads Gemini's refusal of a response schema: the place its field path names (`…response_schema.properties[0]
 * .value.items`, where `properties[0]` is the first member of the `properties` map of the schema sent) and its
 * quoted words (`Unknown name "exclusiveMinimum"`).
 */
export function geminiSchemaRefusal(errorBody: JsonObject, sent: unknown): RefusalText | undefined {
  const message = errorMessageOf(errorBody);
  if (!aboutSchema.test(message)) return undefined;
  const field = /response_?(?:json_?)?schema((?:\.[A-Za-z_$][\w$]*(?:\[\d+\])?)+)/i.exec(message)?.[1];
  return { path: field === undefined ? [] : schemaPath(field, sent), words: quotedWords(message) };
}

/** A proto field path into the schema sent as its member names; a map's entry `[i]` is its i-th member. */
function schemaPath(field: string, sent: unknown): string[] {
  const path: string[] = [];
  let node: unknown = sent;
  for (const step of field.split(".").slice(1)) {
    const [, name = "", index] = /^([^[]+)(?:\[(\d+)\])?$/.exec(step) ?? [];
    if (name === "value" && index === undefined) continue;
    const member = lowerCamel(name);
    path.push(member);
    node = memberOf(node, member);
    if (index === undefined) continue;
    // A list's [i] is its i-th item, a map's its i-th member.
    const key = typeof node === "object" && node !== null ? Object.keys(node)[Number(index)] : undefined;
    if (key === undefined) return path;
    path.push(key);
    node = memberOf(node, key);
  }
  return path;
}

function memberOf(node: unknown, key: string): unknown {
  return typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
}

/** A proto field name as the JSON member it is (`any_of` → `anyOf`). */
function lowerCamel(name: string): string {
  return name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
