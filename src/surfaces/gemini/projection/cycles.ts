import { escapePointerToken } from "../../../schema/json-pointer.js";
import type { Omissions } from "./omissions.js";
import type { SchemaNode } from "./render.js";
import type { Reference, WrittenDefinitions } from "./written-definitions.js";

/**
 * Cycles among written definitions. Gemini's `responseJsonSchema` unrolls a cyclic reference a
 * limited number of times and takes one only inside a property the answer may leave out
 * ("Nullable properties are not sufficient"), so every cycle must pass such a property.
 */

/** A required property on the way to a reference: the object that requires it, and its name. */
interface RequiredSite {
  owner: SchemaNode;
  name: string;
}

/**
 * Makes every cycle pass a property the answer may leave out. A reference reached from the top
 * of its body through required properties only is a required step; the steps a depth-first
 * search finds closing a cycle of required steps are relaxed: the last required property before
 * the reference becomes optional, or, with no property on the way, the reference is left open
 * with the target's type. Both only widen the projection, and both are listed.
 */
export function breakRequiredCycles(written: WrittenDefinitions, omissions: Omissions): void {
  const steps = new Map<string, Array<{ reference: Reference; site: RequiredSite | undefined }>>();
  for (const [container, body] of written.bodies) {
    const visit = (value: unknown, optional: boolean, site: RequiredSite | undefined): void => {
      if (!isNode(value)) return;
      const reference = written.references.get(value);
      if (reference !== undefined) {
        if (!optional) steps.set(container, [...(steps.get(container) ?? []), { reference, site }]);
        return;
      }
      if (isNode(value.properties)) {
        for (const [name, child] of Object.entries(value.properties)) {
          const required = Array.isArray(value.required) && value.required.includes(name);
          visit(child, optional || !required, required ? { owner: value, name } : site);
        }
      }
      // A map's entries are never required.
      visit(value.additionalProperties, true, site);
      visit(value.items, optional, site);
      if (Array.isArray(value.anyOf)) for (const alternative of value.anyOf) visit(alternative, optional, site);
    };
    visit(body, false, undefined);
  }
  const state = new Map<string, "open" | "done">();
  const search = (container: string): void => {
    state.set(container, "open");
    for (const { reference, site } of steps.get(container) ?? []) {
      const target = state.get(reference.target);
      if (target === "open") {
        if (site) makeOptional(written, omissions, site);
        else cut(written, omissions, reference);
      } else if (target === undefined) search(reference.target);
    }
    state.set(container, "done");
  };
  for (const container of written.bodies.keys()) if (!state.has(container)) search(container);
}

/** The definitions on a cycle (in a strongly connected component with another, or referring to themselves). */
export function definitionsOnCycles(written: WrittenDefinitions): Set<string> {
  const live = [...written.references.values()].filter((reference) => reference.cut !== true);
  const edges = new Map<string, string[]>();
  for (const reference of live)
    edges.set(reference.container, [...(edges.get(reference.container) ?? []), reference.target]);
  const components = stronglyConnected([...written.bodies.keys()], edges);
  const sizes = new Map<number, number>();
  for (const component of components.values()) sizes.set(component, (sizes.get(component) ?? 0) + 1);
  const result = new Set<string>();
  for (const [name, component] of components) if ((sizes.get(component) ?? 0) > 1) result.add(name);
  for (const reference of live) if (reference.container === reference.target) result.add(reference.target);
  return result;
}

function makeOptional(written: WrittenDefinitions, omissions: Omissions, { owner, name }: RequiredSite): void {
  if (!Array.isArray(owner.required) || !owner.required.includes(name)) return;
  const required = owner.required.filter((item) => item !== name);
  if (required.length > 0) owner.required = required;
  else delete owner.required;
  const location = `${written.originOf(owner) ?? ""}/properties/${escapePointerToken(name)}`;
  omissions.add(location, 0, "required (on a $ref cycle, which Gemini unrolls only through optional properties)");
}

function cut(written: WrittenDefinitions, omissions: Omissions, reference: Reference): void {
  reference.cut = true;
  delete reference.node.$ref;
  const type = written.bodies.get(reference.target)?.type;
  if (type !== undefined) reference.node.type = structuredClone(type);
  omissions.add(
    written.keyOf(reference.target),
    0,
    "recursive $ref left open (a cycle through no property, which Gemini cannot unroll)",
  );
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Tarjan's algorithm: a component number for each of `nodes`. */
function stronglyConnected(
  nodes: readonly string[],
  edges: ReadonlyMap<string, readonly string[]>,
): Map<string, number> {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  let counter = 0;
  const connect = (node: string): void => {
    index.set(node, counter);
    lowLink.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) === index.get(node)) {
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.set(member, index.get(node)!);
        if (member === node) break;
      }
    }
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return component;
}
