import { compactJson } from "../json/compact-json.js";
import { escapePointerToken } from "./json-pointer.js";
import { schemaListKeywords, schemaMapKeywords, schemaValueKeywords } from "./schema-nodes.js";
import { indexSchemaLeniently, innerBase, isSchemaObject, type RefIndex } from "./schema-refs.js";

/**
 * Finding the `$ref` cycles that never move into a part of the instance: `{"allOf": [{"$ref": "#"}]}`
 * asks a validator to check the same value against the same schema forever, so Ajv overflows its stack
 * and a generator never ends. A cycle through `properties`, `items` and the like is fine: each turn
 * reaches a smaller part of the answer, and the answer is finite.
 */

/** Keywords whose subschemas apply to the very value the schema applies to. */
const inPlaceKeywords = new Set([
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  // These apply to the object itself (when it has a given member), not to the member's value.
  "dependentSchemas",
  "dependencies",
]);

type SchemaObject = Record<string, unknown>;

interface GraphNode {
  /** Where the node sits: below a parent by one step, or at a location a reference resolved to. */
  readonly place: { parent: GraphNode; step: string } | { location: string };
  /** Subschemas and reference targets that apply to the same value. */
  readonly inPlace: SchemaObject[];
}

/**
 * The locations (JSON pointers into the schema) of one cycle of references and in-place keywords
 * (`allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`, `dependentSchemas`, `$ref`, `$dynamicRef`,
 * `$recursiveRef`) that passes no keyword moving into a child value; undefined when there is none.
 * References resolve as the Gemini projection resolves them (`$id` bases, `$anchor`s, JSON pointers
 * with `~0`/`~1` and percent escapes); one that cannot be followed is left to the compiler to refuse.
 * A `$dynamicRef` or `$recursiveRef` counts as pointing at every anchor it could reach at run time.
 */
export function inPlaceCycle(schema: unknown): string[] | undefined {
  // Without a reference, a parsed document is a tree: it has no cycle at all.
  if (!isSchemaObject(schema) || !/"\$(ref|dynamicRef|recursiveRef)"/.test(compactJson(schema))) return undefined;
  const graph = schemaGraph(schema, indexSchemaLeniently(schema, "response_schema"));
  return findCycle(schema, graph)?.map((node) => locationOf(graph.get(node)));
}

type Pending = { node: SchemaObject; base: string; place: GraphNode["place"] };

/** Every schema object reachable from the root, through subschema keywords or references. */
function schemaGraph(root: SchemaObject, index: RefIndex): Map<SchemaObject, GraphNode> {
  const graph = new Map<SchemaObject, GraphNode>();
  const dynamicAnchors = new Map<string, SchemaObject[]>();
  const recursiveAnchors: SchemaObject[] = [];
  const lateEdges: Array<{ from: GraphNode; targets: () => SchemaObject[] }> = [];
  const pending: Pending[] = [{ node: root, base: index.rootBase, place: { location: "" } }];

  const enqueue = (node: unknown, outerBase: string, place: GraphNode["place"]): node is SchemaObject => {
    if (!isSchemaObject(node)) return false;
    if (!graph.has(node)) pending.push({ node, base: innerBase(node, outerBase), place });
    return true;
  };
  const follow = (ref: unknown, base: string): SchemaObject | undefined => {
    if (typeof ref !== "string") return undefined;
    // Ajv keeps a `~` that escapes nothing as it is, so `#/$defs/a~b` reaches `a~b` there: it must here too.
    for (const spelling of new Set([ref, ref.replace(/~(?![01])/g, "~0")])) {
      try {
        const target = index.resolve(spelling, base);
        return enqueue(target.node, target.base, { location: target.location }) ? target.node : undefined;
      } catch {
        // Not followed in this spelling.
      }
    }
    return undefined;
  };

  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { node, base, place } = item;
    if (graph.has(node)) continue;
    const entry: GraphNode = { place, inPlace: [] };
    graph.set(node, entry);
    forEachSubschema(node, (keyword, child, step) => {
      if (enqueue(child, base, { parent: entry, step }) && inPlaceKeywords.has(keyword)) entry.inPlace.push(child);
    });
    for (const keyword of ["$ref", "$dynamicRef", "$recursiveRef"]) {
      const target = follow(node[keyword], base);
      if (target !== undefined) entry.inPlace.push(target);
    }
    if (typeof node.$dynamicAnchor === "string") {
      dynamicAnchors.set(node.$dynamicAnchor, [...(dynamicAnchors.get(node.$dynamicAnchor) ?? []), node]);
    }
    if (node.$recursiveAnchor === true) recursiveAnchors.push(node);
    const dynamicName = anchorName(node.$dynamicRef);
    if (dynamicName !== undefined)
      lateEdges.push({ from: entry, targets: () => dynamicAnchors.get(dynamicName) ?? [] });
    if (typeof node.$recursiveRef === "string") lateEdges.push({ from: entry, targets: () => recursiveAnchors });
  }
  // Dynamic scope is known only at run time: every anchor of the name is a possible target.
  for (const { from, targets } of lateEdges) from.inPlace.push(...targets());
  return graph;
}

/** Calls `visit` with each subschema directly under a node, its keyword and the step to it. */
function forEachSubschema(node: SchemaObject, visit: (keyword: string, child: unknown, step: string) => void): void {
  for (const keyword of schemaValueKeywords) {
    if (isSchemaObject(node[keyword])) visit(keyword, node[keyword], keyword);
  }
  for (const keyword of schemaListKeywords) {
    const list = node[keyword];
    if (!Array.isArray(list)) continue;
    for (let at = 0; at < list.length; at++) visit(keyword, list[at], `${keyword}/${at}`);
  }
  for (const keyword of schemaMapKeywords) {
    const map = node[keyword];
    if (!isSchemaObject(map)) continue;
    for (const name of Object.keys(map)) visit(keyword, map[name], `${keyword}/${escapePointerToken(name)}`);
  }
}

function locationOf(node: GraphNode | undefined): string {
  const steps: string[] = [];
  let at = node;
  while (at !== undefined) {
    if ("location" in at.place) return at.place.location + steps.reverse().join("");
    steps.push(`/${at.place.step}`);
    at = at.place.parent;
  }
  return steps.reverse().join("");
}

/** The name of a plain-name fragment reference (`#node`), percent-decoded. */
function anchorName(ref: unknown): string | undefined {
  if (typeof ref !== "string" || !ref.startsWith("#") || ref.startsWith("#/") || ref.length < 2) return undefined;
  try {
    return decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
}

/** A cycle of in-place edges, by depth-first search without recursion (a schema may nest deeply). */
function findCycle(root: SchemaObject, graph: Map<SchemaObject, GraphNode>): SchemaObject[] | undefined {
  const finished = new Set<SchemaObject>();
  const onPath = new Set<SchemaObject>();
  for (const start of [root, ...graph.keys()]) {
    if (finished.has(start)) continue;
    const path: Array<{ node: SchemaObject; next: number }> = [{ node: start, next: 0 }];
    onPath.add(start);
    while (path.length > 0) {
      const top = path[path.length - 1] as { node: SchemaObject; next: number };
      const child = graph.get(top.node)?.inPlace[top.next++];
      if (child === undefined) {
        path.pop();
        onPath.delete(top.node);
        finished.add(top.node);
      } else if (onPath.has(child)) {
        return path.slice(path.findIndex((step) => step.node === child)).map((step) => step.node);
      } else if (!finished.has(child)) {
        path.push({ node: child, next: 0 });
        onPath.add(child);
      }
    }
  }
  return undefined;
}
