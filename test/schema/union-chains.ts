// Schemas whose validation multiplies (issue 51): a `$defs` chain where each link is an `anyOf` of alternatives that
// all refer to the next link, with an oracle of their own that decides them in time linear in the answer.

/** How an alternative of one link reaches the next link. */
export type Alternative = "object" | "object-with-number" | "array" | "closed-object" | "other-name";

/** The type the last link requires. */
export type Leaf = "integer" | "string" | "boolean";

/** A chain: each link the alternatives of its `anyOf`, then the leaf. */
export interface UnionChain {
  readonly links: readonly (readonly Alternative[])[];
  readonly leaf: Leaf;
}

type Json = null | boolean | number | string | Json[] | { [name: string]: Json };

/** The chain of issue 51: 4 alternatives per link, three of them objects holding the next link under `v`. */
export function reproductionChain(depth: number): UnionChain {
  const alternatives: Alternative[] = ["object", "object-with-number", "array", "closed-object"];
  return { links: Array.from({ length: depth }, () => alternatives), leaf: "integer" };
}

/** An answer that nests `{ "v": … }` as deep as the chain, with a string where the leaf wants an integer. */
export function failingAnswer(depth: number): Json {
  let answer: Json = "not an integer";
  for (let level = 0; level < depth; level++) answer = { v: answer };
  return answer;
}

/** The chain as a JSON Schema: `#/$defs/l0` … `#/$defs/lN`, the last one the leaf. */
export function chainSchema({ links, leaf }: UnionChain): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  links.forEach((alternatives, level) => {
    const next = { $ref: `#/$defs/l${level + 1}` };
    $defs[`l${level}`] = { anyOf: alternatives.map((alternative) => alternativeSchema(alternative, next)) };
  });
  $defs[`l${links.length}`] = { type: leaf };
  return { $ref: "#/$defs/l0", $defs };
}

function alternativeSchema(alternative: Alternative, next: unknown): Record<string, unknown> {
  switch (alternative) {
    case "object":
      return { type: "object", properties: { v: next }, required: ["v"] };
    case "object-with-number":
      return { type: "object", properties: { v: next, n: { type: "number" } }, required: ["v", "n"] };
    case "array":
      return { type: "array", items: next };
    case "closed-object":
      return { type: "object", properties: { v: next }, additionalProperties: false };
    case "other-name":
      return { type: "object", properties: { w: next }, required: ["w"] };
  }
}

/** Whether the chain's schema accepts `answer`, decided once per link and value (so never more than linearly). */
export function chainAccepts(chain: UnionChain, answer: unknown): boolean {
  const decided = chain.links.map(() => new Map<unknown, boolean>());
  const accepts = (level: number, value: unknown): boolean => {
    const alternatives = chain.links[level];
    if (alternatives === undefined) return leafAccepts(chain.leaf, value);
    const memo = decided[level] as Map<unknown, boolean>;
    const known = typeof value === "object" && value !== null ? memo.get(value) : undefined;
    if (known !== undefined) return known;
    const next = (child: unknown) => accepts(level + 1, child);
    const verdict = alternatives.some((alternative) => alternativeAccepts(alternative, value, next));
    if (typeof value === "object" && value !== null) memo.set(value, verdict);
    return verdict;
  };
  return accepts(0, answer);
}

function alternativeAccepts(alternative: Alternative, value: unknown, next: (child: unknown) => boolean): boolean {
  if (alternative === "array") return Array.isArray(value) && value.every(next);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const object = value as Record<string, unknown>;
  switch (alternative) {
    case "object":
      return Object.hasOwn(object, "v") && next(object.v);
    case "object-with-number":
      return Object.hasOwn(object, "v") && typeof object.n === "number" && next(object.v);
    case "closed-object":
      return Object.keys(object).every((name) => name === "v") && (!Object.hasOwn(object, "v") || next(object.v));
    case "other-name":
      return Object.hasOwn(object, "w") && next(object.w);
  }
}

function leafAccepts(leaf: Leaf, value: unknown): boolean {
  if (leaf === "integer") return typeof value === "number" && Number.isInteger(value);
  return typeof value === leaf;
}

/**
 * An answer the chain accepts, built by taking alternative `choices[level]` (modulo their number) at each link;
 * with `wrongLeaf`, the same answer with a value of another type at the bottom.
 */
export function chainAnswer(chain: UnionChain, choices: readonly number[], wrongLeaf: boolean): Json {
  const leafValues: Record<Leaf, Json> = { integer: 7, string: "text", boolean: true };
  let answer: Json = wrongLeaf ? (chain.leaf === "string" ? 7 : "text") : leafValues[chain.leaf];
  for (let level = chain.links.length - 1; level >= 0; level--) {
    const alternatives = chain.links[level] ?? [];
    const alternative = alternatives[(choices[level] ?? 0) % alternatives.length] as Alternative;
    answer = wrap(alternative, answer);
  }
  return answer;
}

function wrap(alternative: Alternative, inner: Json): Json {
  switch (alternative) {
    case "object":
    case "closed-object":
      return { v: inner };
    case "object-with-number":
      return { v: inner, n: 1 };
    case "array":
      return [inner];
    case "other-name":
      return { w: inner };
  }
}
