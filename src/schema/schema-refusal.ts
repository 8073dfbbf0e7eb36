import type { Validation, ValidationError } from "./diagnostics.js";
import { escapePointerToken } from "./json-pointer.js";

/**
 * What a provider's refusal of a response schema names, read from its error text by the surface: the place in the
 * schema it was sent (its member names, outermost first) and the quoted words of the message, among which the
 * keyword it refused. Neither reaches a client unless the schema sent holds it (see `schemaRefusal`).
 */
export interface RefusalText {
  path: readonly string[];
  words: readonly string[];
}

/** The keywords of JSON Schema (draft-07, 2019-09, 2020-12) and of OpenAPI's schema object that a provider may name. */
const schemaKeywords = new Set([
  "$anchor",
  "$comment",
  "$defs",
  "$dynamicAnchor",
  "$dynamicRef",
  "$id",
  "$recursiveAnchor",
  "$recursiveRef",
  "$ref",
  "$schema",
  "additionalItems",
  "additionalProperties",
  "allOf",
  "anyOf",
  "const",
  "contains",
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
  "default",
  "definitions",
  "dependencies",
  "dependentRequired",
  "dependentSchemas",
  "deprecated",
  "description",
  "discriminator",
  "else",
  "enum",
  "example",
  "examples",
  "exclusiveMaximum",
  "exclusiveMinimum",
  "format",
  "if",
  "items",
  "maxContains",
  "maxItems",
  "maxLength",
  "maxProperties",
  "maximum",
  "minContains",
  "minItems",
  "minLength",
  "minProperties",
  "minimum",
  "multipleOf",
  "not",
  "nullable",
  "oneOf",
  "pattern",
  "patternProperties",
  "prefixItems",
  "properties",
  "propertyNames",
  "propertyOrdering",
  "readOnly",
  "required",
  "then",
  "title",
  "type",
  "unevaluatedItems",
  "unevaluatedProperties",
  "uniqueItems",
  "writeOnly",
]);

/**
 * A provider's refusal of the response schema as diagnostics, without the provider's text: the place it names, as a
 * JSON Pointer into the schema that was sent, as far as that schema holds each step (a step past that is `*`), and
 * the keyword it refused where one of its quoted words is a JSON Schema keyword (`refused_keyword`).
 */
export function schemaRefusal(text: RefusalText | undefined, sent: unknown): Validation {
  const known: string[] = [];
  let node: unknown = sent;
  for (const segment of text?.path ?? []) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) {
      known.push("*");
      break;
    }
    known.push(segment);
    node = (node as Record<string, unknown>)[segment];
  }
  const keyword = text?.words.find((word) => schemaKeywords.has(word));
  const path = known.map((segment) => `/${escapePointerToken(segment)}`).join("");
  const where = path === "" ? "" : ` at ${path}`;
  const what = keyword === undefined ? "" : `, naming its keyword '${keyword}'`;
  const error: ValidationError = {
    validation_path: path,
    validation_keyword: "provider_schema",
    ...(keyword === undefined ? {} : { refused_keyword: keyword }),
    hint: `The provider rejected the response schema${where}${what}.`,
  };
  return { valid: false, errors: [error] };
}

/** The quoted words of a provider's message ('…' or "…"), in order, each as a candidate keyword or member name. */
export function quotedWords(message: string): string[] {
  return [...message.matchAll(/'([^'\n]{1,200})'|"([^"\n]{1,200})"/g)].map((match) => match[1] ?? match[2] ?? "");
}
