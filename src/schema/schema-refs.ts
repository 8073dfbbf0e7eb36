import { invalidRequest } from "../errors/gateway-error.js";
import { escapePointerToken, pointerTokens } from "./json-pointer.js";
import { schemaListKeywords, schemaMapKeywords, schemaValueKeywords } from "./schema-nodes.js";

/**
 * Local `$ref` resolution (for the Gemini projection and the reference-cycle check): JSON pointers (`#`, `#/$defs/x`,
 * `#/definitions/x`, with `~0`/`~1` and percent escapes), `$anchor`s and embedded `$id`
 * resources of the same document. Everything else is a reference the gateway cannot follow.
 */

type SchemaObject = Record<string, unknown>;

/** A schema node a reference points at, with where it sits and the base URI around it. */
export interface RefTarget {
  node: unknown;
  location: string;
  base: string;
}

export interface RefIndex {
  /** The base URI of the document root. */
  readonly rootBase: string;
  /** Resolves a `$ref` found under `base`; throws `INVALID_REQUEST` if it leaves the document or points nowhere. */
  resolve(ref: string, base: string): RefTarget;
}

const messages = {
  external: "The response schema has a $ref to another document; only references inside the schema can be used.",
  dangling: "The response schema has a $ref that does not point to a schema inside it.",
};

/** Stands in for the document's URI when the root has no absolute `$id`. */
const syntheticRoot = "x-promptgate-root:/";

/** The base URI inside `node`: its own `$id` resolved against the base around it, if it has one. */
export function innerBase(node: SchemaObject, outerBase: string): string {
  const id = node.$id;
  if (typeof id !== "string" || id.startsWith("#")) return outerBase;
  try {
    return withoutFragment(new URL(id, outerBase)).href;
  } catch {
    return outerBase;
  }
}

/**
 * Indexes the document's resources and anchors and checks every `$ref` in it, so that a
 * schema the gateway cannot take fails before any provider call, whatever the mode.
 */
export function indexSchema(root: unknown, param: string): RefIndex {
  const { index, refs } = buildIndex(root, param);
  for (const { ref, base } of refs) index.resolve(ref, base);
  return index;
}

/** Like `indexSchema`, without checking the document's `$ref`s up front: `resolve` still throws for one it cannot follow. */
export function indexSchemaLeniently(root: unknown, param: string): RefIndex {
  return buildIndex(root, param).index;
}

function buildIndex(root: unknown, param: string): { index: RefIndex; refs: Array<{ ref: string; base: string }> } {
  const resources = new Map<string, RefTarget>();
  const anchors = new Map<string, RefTarget>();
  const outerBases = new WeakMap<object, string>();
  const refs: Array<{ ref: string; base: string }> = [];
  const rootBase = isSchemaObject(root) ? innerBase(root, syntheticRoot) : syntheticRoot;
  resources.set(rootBase, { node: root, location: "", base: syntheticRoot });

  const visit = (node: unknown, location: string, outerBase: string): void => {
    if (!isSchemaObject(node) || outerBases.has(node)) return;
    outerBases.set(node, outerBase);
    const base = innerBase(node, outerBase);
    if (base !== outerBase) resources.set(base, { node, location, base: outerBase });
    const target = { node, location, base: outerBase };
    if (typeof node.$id === "string" && node.$id.startsWith("#")) anchors.set(`${base}${node.$id}`, target);
    for (const keyword of ["$anchor", "$dynamicAnchor"]) {
      const anchor = node[keyword];
      if (typeof anchor === "string") anchors.set(`${base}#${anchor}`, target);
    }
    if (typeof node.$ref === "string") refs.push({ ref: node.$ref, base });
    for (const keyword of schemaValueKeywords) {
      if (keyword in node) visit(node[keyword], `${location}/${keyword}`, base);
    }
    for (const keyword of schemaListKeywords) {
      const list = node[keyword];
      if (!Array.isArray(list)) continue;
      list.forEach((item, index) => {
        visit(item, `${location}/${keyword}/${index}`, base);
      });
    }
    for (const keyword of schemaMapKeywords) {
      const map = node[keyword];
      if (!isSchemaObject(map)) continue;
      for (const [name, item] of Object.entries(map))
        visit(item, `${location}/${keyword}/${escapePointerToken(name)}`, base);
    }
  };

  const resolve = (ref: string, base: string): RefTarget => {
    let url: URL;
    try {
      url = new URL(ref, base);
    } catch {
      throw invalidRequest(messages.dangling, param);
    }
    const fragment = url.hash;
    const resource = resources.get(withoutFragment(url).href);
    if (resource === undefined) throw invalidRequest(messages.external, param);
    const target =
      fragment === "" || fragment === "#"
        ? resource
        : fragment.startsWith("#/")
          ? followPointer(resource, fragment.slice(1), outerBases)
          : anchors.get(`${withoutFragment(url).href}${decodeOrUndefined(fragment) ?? ""}`);
    if (target === undefined || !(isSchemaObject(target.node) || typeof target.node === "boolean")) {
      throw invalidRequest(messages.dangling, param);
    }
    return target;
  };

  visit(root, "", syntheticRoot);
  return { index: { rootBase, resolve }, refs };
}

/** Follows a JSON pointer (already without its `#`) from a resource. */
function followPointer(
  resource: RefTarget,
  pointer: string,
  outerBases: WeakMap<object, string>,
): RefTarget | undefined {
  const tokens = pointerTokens(`#${pointer}`);
  if (tokens === undefined) return undefined;
  let node: unknown = resource.node;
  let base = resource.base;
  for (const token of tokens) {
    if (isSchemaObject(node)) base = innerBase(node, base);
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token)) node = node[Number(token)];
    else if (isSchemaObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return undefined;
  }
  const known = isSchemaObject(node) ? outerBases.get(node) : undefined;
  return {
    node,
    location: `${resource.location}${tokens.map((token) => `/${escapePointerToken(token)}`).join("")}`,
    base: known ?? base,
  };
}

function withoutFragment(url: URL): URL {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy;
}

function decodeOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
