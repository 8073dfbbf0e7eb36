import type { Schema } from "@cfworker/json-schema";
import type { InterpretedSchema } from "./interpreted-copy.js";
import { escapePointerToken } from "./json-pointer.js";
import { isSchemaNode, type SchemaNode, schemaListKeywords, schemaMapKeywords } from "./schema-nodes.js";

/** Where an error of the interpretive validator sits in the schema, read from its `keywordLocation`. */
export interface InterpretedLocation {
  /** The node of the copy the failing keyword belongs to. */
  readonly owner: SchemaNode | undefined;
  /** The node the owner was reached from. */
  readonly parent: SchemaNode | undefined;
  /** The failing keyword (the location's last token), or undefined where the location ends at a node. */
  readonly keyword: string | undefined;
  /** The owner's place as Ajv writes a `schemaPath` (see ValidatorError.schemaPath). */
  readonly ownerPath: string;
  /** The keywords passed on the way, in order (e.g. `properties`, `items`, `$ref`). */
  readonly through: readonly string[];
  /** A number format's check passed on the way: its name, and the place of the node whose `format` it is. */
  readonly format?: { readonly name: string; readonly ownerPath: string };
}

const applicators = new Set(["allOf", "anyOf", "oneOf"]);

/** Keywords whose keyword locations the validator spells otherwise. */
const spelledAs: Record<string, string> = { dependantRequired: "dependentRequired" };

/** The tokens of a `keywordLocation` or `instanceLocation` (`#/a/b`, each token URI-encoded and pointer-escaped). */
export function locationTokens(location: string): string[] {
  if (location === "#" || location === "") return [];
  return location
    .replace(/^#\//, "")
    .split("/")
    .map((token) => decodeURIComponent(token).replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** An `instanceLocation` as a JSON Pointer. */
export function instancePointer(location: string): string {
  return locationTokens(location)
    .map((token) => `/${escapePointerToken(token)}`)
    .join("");
}

/**
 * Walks the copy along a `keywordLocation` as the validator did: through `$ref`s (and 2019-09's `$recursiveRef`,
 * with the validator's own handling of the recursive anchor) and into subschemas, up to the failing keyword.
 */
export function interpretedLocation(schema: InterpretedSchema, location: string): InterpretedLocation {
  const tokens = locationTokens(location);
  let node: unknown = schema.root;
  let parent: SchemaNode | undefined;
  let prefix = "#";
  let segments: string[] = [];
  let anchor: unknown = isSchemaNode(node) && node.$recursiveAnchor === true ? node : null;
  let format: InterpretedLocation["format"];
  const through: string[] = [];
  const pathOf = (parts: readonly string[]) =>
    `${prefix}${parts.map((part) => `/${encodeURIComponent(escapePointerToken(part))}`).join("")}`;

  for (let index = 0; index < tokens.length; index++) {
    if (!isSchemaNode(node)) break;
    const token = tokens[index] as string;
    const next = tokens[index + 1];
    const value = node[token];
    const from: SchemaNode = node;
    if (next === undefined && (token === "$ref" || token === "$recursiveRef")) {
      return { owner: node, parent, keyword: token, ownerPath: pathOf(segments), through, format };
    }
    if (token === "$ref") {
      const target = schema.lookup[(node as Schema).__absolute_ref__ ?? ""];
      prefix = ajvInlines(schema, target) ? String(node.$ref) : "#";
      segments = [];
      node = target;
    } else if (token === "$recursiveRef") {
      // The validator first checks the node again with the reference's target as anchor, then goes to the anchor.
      prefix = "#";
      segments = [];
      if (anchor === null) anchor = schema.lookup[(node as Schema).__absolute_recursive_ref__ ?? ""];
      else node = anchor;
    } else if (next !== undefined && schemaMapKeywords.includes(token) && isSchemaNode(value)) {
      segments.push(token, next);
      node = value[next];
      index += 1;
    } else if (next !== undefined && schemaListKeywords.includes(token) && Array.isArray(value)) {
      // The validator keeps the recursive anchor into an alternative only where the node holding it is anchored.
      if (applicators.has(token) && node.$recursiveAnchor !== true) anchor = null;
      segments.push(token, next);
      node = value[Number(next)];
      index += 1;
    } else if (next !== undefined && isSchemaNode(value)) {
      segments.push(token);
      node = value;
    } else {
      return { owner: node, parent, keyword: spelledAs[token] ?? token, ownerPath: pathOf(segments), through, format };
    }
    parent = from;
    through.push(token);
    if (isSchemaNode(node) && node.$recursiveAnchor === true && anchor === null) anchor = node;
    const formatName = isSchemaNode(node) ? schema.formatChecks.get(node) : undefined;
    if (formatName !== undefined) format = { name: formatName, ownerPath: pathOf(segments.slice(0, -2)) };
  }
  return {
    owner: isSchemaNode(node) ? node : undefined,
    parent,
    keyword: undefined,
    ownerPath: pathOf(segments),
    through,
  };
}

/**
 * Whether Ajv inlines a `$ref` to this target (rather than compile it apart): when the target, as prepared, holds no
 * reference keyword at any depth (Ajv's `inlineRef` with `inlineRefs: true`).
 */
function ajvInlines(schema: InterpretedSchema, target: unknown): boolean {
  if (typeof target === "boolean") return true;
  const original = isSchemaNode(target) ? schema.originals.get(target) : undefined;
  return original !== undefined && !hasRef(original);
}

const refKeywords = new Set(["$ref", "$recursiveRef", "$recursiveAnchor", "$dynamicRef", "$dynamicAnchor"]);

/** Ajv's `hasRef`: any reference keyword in any object member, at any depth (values of `enum` and `const` too). */
function hasRef(value: Record<string, unknown>): boolean {
  for (const [key, member] of Object.entries(value)) {
    if (refKeywords.has(key)) return true;
    if (Array.isArray(member) && member.some((item) => isObject(item) && hasRef(item))) return true;
    if (isObject(member) && hasRef(member)) return true;
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
