import { codePoints } from "./code-points.js";

/*
 * Compact schema signatures: a JSON Schema as the few characters a model needs to write a conforming
 * answer: fields (`?` when optional), types with their bounds, enums and constants, alternatives. The full schema
 * stays the validator; a signature is documentation, never a schema copy.
 */

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * How far a signature or form example may expand a schema: `$ref`s and alternatives inline what they name, so a
 * schema of a kilobyte can name a signature of gigabytes (each level's `anyOf` of refs to the next multiplies it).
 * A schema nests far less than `maxDepth` in practice, and v22's signature is 912 characters.
 */
export const signatureLimits = {
  /** Levels of nested schemas (through `$ref`s too) followed. */
  maxDepth: 32,
  /** Characters (UTF-16 units) of the signature, and of the form example. */
  maxChars: 20_000,
  /** Schemas visited to write one of them. */
  maxNodes: 20_000,
} as const;

const expansionMessages = {
  maxDepth: `The schema nests more than ${signatureLimits.maxDepth} levels deep, counting the $refs it follows.`,
  maxChars:
    `The schema's signature or form example would pass ${signatureLimits.maxChars} characters: ` +
    "its $refs and alternatives inline too much.",
  maxNodes:
    `The schema's signature or form example would expand more than ${signatureLimits.maxNodes} schemas: ` +
    "its $refs and alternatives inline too much.",
} as const;

/** Why a schema has no signature or form example here: it expands past `signatureLimits`. */
export class SchemaExpansionError extends Error {
  override readonly name = "SchemaExpansionError";

  constructor(readonly limit: keyof typeof signatureLimits) {
    super(expansionMessages[limit]);
  }

  static isInstance(value: unknown): value is SchemaExpansionError {
    return value instanceof SchemaExpansionError;
  }
}

/** What a signature or form example has spent so far of `signatureLimits`. */
interface Budget {
  chars: number;
  nodes: number;
}

/** Counts one visited schema, refusing a depth or a count past the limits. */
function visit(budget: Budget, depth: number): void {
  if (depth > signatureLimits.maxDepth) throw new SchemaExpansionError("maxDepth");
  budget.nodes += 1;
  if (budget.nodes > signatureLimits.maxNodes) throw new SchemaExpansionError("maxNodes");
}

/** Adds `chars` to what is written, refusing it past the limit. */
function spend(budget: Budget, chars: number): void {
  budget.chars += chars;
  if (budget.chars > signatureLimits.maxChars) throw new SchemaExpansionError("maxChars");
}

/** Where `$ref`s resolve (the root), and the references being rendered (a recursive one is named, not expanded). */
interface Context {
  root: Schema;
  open: Set<string>;
  depth: number;
  budget: Budget;
}

/** The local definition a `$ref` names (`#/$defs/x`, `#/definitions/x`, any JSON pointer into the root). */
function resolve(root: Schema, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    node = isSchema(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
  }
  return node;
}

/** Bounds of a value or a length: `≥0`, `≤10`, `(1..500)`, `(=1)`. */
function bounds(low: unknown, high: unknown, exclusiveLow?: unknown, exclusiveHigh?: unknown): string {
  const lo = typeof exclusiveLow === "number" ? `>${exclusiveLow}` : typeof low === "number" ? `≥${low}` : "";
  const hi = typeof exclusiveHigh === "number" ? `<${exclusiveHigh}` : typeof high === "number" ? `≤${high}` : "";
  if (
    typeof low === "number" &&
    typeof high === "number" &&
    exclusiveLow === undefined &&
    exclusiveHigh === undefined
  ) {
    return low === high ? `(=${low})` : `(${low}..${high})`;
  }
  return lo + hi;
}

function literal(value: unknown): string {
  return JSON.stringify(value);
}

/** A field name as written: bare when it is an identifier, quoted otherwise. */
function fieldName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/**
 * A schema rendered, its characters counted as they are written: the nested schemas it renders counted their own,
 * so what is spent is exactly the characters written so far, and an expansion stops as soon as it passes the limit.
 */
function render(schema: unknown, context: Context): string {
  visit(context.budget, context.depth);
  const before = context.budget.chars;
  const text = renderNode(schema, context);
  spend(context.budget, before + text.length - context.budget.chars);
  return text;
}

function renderNode(schema: unknown, context: Context): string {
  if (schema === true || schema === undefined) return "any";
  if (schema === false) return "never";
  if (!isSchema(schema)) return "any";
  const inner = { ...context, depth: context.depth + 1 };
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    const name = ref.split("/").pop() ?? ref;
    if (context.open.has(ref)) return `<${name}>`;
    const target = resolve(context.root, ref);
    if (target === undefined) return `<${name}>`;
    context.open.add(ref);
    try {
      return render(target, inner);
    } finally {
      context.open.delete(ref);
    }
  }
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join("|");
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return options.map((option) => render(option, inner)).join(" | ");
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return schema.allOf.map((part) => render(part, inner)).join(" & ");
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0) {
    if (isSchema(schema.properties) || isSchema(schema.additionalProperties)) return object(schema, inner);
    if (schema.items !== undefined) return array(schema, inner);
    return "any";
  }
  return types.map((type) => typed(String(type), schema, inner)).join("|");
}

function typed(type: string, schema: Schema, context: Context): string {
  switch (type) {
    case "string": {
      const format = typeof schema.format === "string" ? `(${schema.format})` : "";
      return `str${format}${bounds(schema.minLength === 0 ? undefined : schema.minLength, schema.maxLength)}`;
    }
    case "integer":
      return `int${bounds(schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum)}`;
    case "number":
      return `num${bounds(schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum)}`;
    case "boolean":
      return "bool";
    case "null":
      return "null";
    case "array":
      return array(schema, context);
    case "object":
      return object(schema, context);
    default:
      return type;
  }
}

function array(schema: Schema, context: Context): string {
  const items = Array.isArray(schema.prefixItems)
    ? `[${schema.prefixItems.map((item) => render(item, context)).join(", ")}]`
    : `[${render(schema.items, context)}]`;
  return items + bounds(schema.minItems === 0 ? undefined : schema.minItems, schema.maxItems);
}

function fields(schema: Schema, context: Context): string[] {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const list = Object.entries(properties).map(
    ([name, property]) => `${fieldName(name)}${required.has(name) ? "" : "?"}: ${render(property, context)}`,
  );
  if (isSchema(schema.additionalProperties)) list.push(`[key]: ${render(schema.additionalProperties, context)}`);
  return list;
}

function object(schema: Schema, context: Context): string {
  const list = fields(schema, context);
  return list.length === 0 ? "{}" : `{${list.join(", ")}}`;
}

/**
 * A JSON Schema's compact signature: one line per top-level field of an object schema (`name?: type` when optional),
 * nested objects as `{a: str≤400, b?: int≥0}`, arrays as `[T]≤12`, alternatives as `A | B`, enums and constants
 * as JSON literals, local `$ref`s inlined (a recursive one named as `<name>`). Counted in code points, it is a
 * fraction of the schema's compact JSON.
 */
export function signature(schema: unknown): string {
  const root = isSchema(schema) ? schema : {};
  const context: Context = { root, open: new Set(), depth: 0, budget: { chars: 0, nodes: 0 } };
  const type = root.type;
  if (isSchema(root.properties) && (type === "object" || type === undefined) && root.oneOf === undefined) {
    const text = fields(root, { ...context, depth: 1 }).join("\n");
    spend(context.budget, text.length - context.budget.chars);
    return text;
  }
  return render(schema, context);
}

/** The label a form example carries, so that a model reads its values as placeholders, not as instructions. */
export const formExampleLabel = "Form example (placeholder values, not a research instruction):";

/**
 * A schema's example value. Every part it writes is charged to the budget at no less than its JSON size (a field's
 * name and punctuation, a placeholder, a constant's JSON), so that an example inlining a `$ref` too often is refused
 * before it is built.
 */
function example(schema: unknown, context: Context, name: string): unknown {
  visit(context.budget, context.depth);
  const inner = { ...context, depth: context.depth + 1 };
  if (!isSchema(schema)) return valued(context, null);
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (context.open.has(ref)) return valued(context, null);
    context.open.add(ref);
    try {
      return example(resolve(context.root, ref), inner, name);
    } finally {
      context.open.delete(ref);
    }
  }
  if ("const" in schema) return valued(context, schema.const);
  if (Array.isArray(schema.enum)) return valued(context, schema.enum[0] ?? null);
  for (const key of ["oneOf", "anyOf", "allOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return example(options[0], inner, name);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (isSchema(schema.properties) ? "object" : schema.items !== undefined ? "array" : undefined)) {
    case "string":
      return valued(context, `<${name}>`);
    case "integer":
    case "number":
      return valued(context, typeof schema.minimum === "number" ? schema.minimum : 0);
    case "boolean":
      return valued(context, false);
    case "array":
      spend(context.budget, 2);
      return [example(schema.items, inner, name)];
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      spend(context.budget, 2);
      return Object.fromEntries(
        Object.entries(properties).map(([field, property]) => {
          spend(context.budget, JSON.stringify(field).length + 2);
          return [field, example(property, inner, field)];
        }),
      );
    }
    default:
      return valued(context, null);
  }
}

/** A value an example writes as it is, charged at its JSON size. */
function valued(context: Context, value: unknown): unknown {
  spend(context.budget, JSON.stringify(value)?.length ?? 4);
  return value;
}

/**
 * A literal JSON object of a schema's form, labelled as a form example: strings are `<field name>` placeholders,
 * numbers their minimum or 0, an enum its first value, alternatives their first, arrays one item. It shows the
 * shape, never what to research; the schema stays the validator, and the gateway's de-duplication does not take
 * the example for a copy of the schema.
 */
export function formExample(schema: unknown): string {
  const root = isSchema(schema) ? schema : {};
  const context: Context = { root, open: new Set(), depth: 0, budget: { chars: 0, nodes: 0 } };
  return `${formExampleLabel}\n${JSON.stringify(example(schema, context, "value"))}`;
}

/** A schema's signature and form example, with their sizes in code points and the schema's as compact JSON. */
export function describeSchema(schema: unknown): {
  signature: string;
  form_example: string;
  signature_chars: number;
  form_example_chars: number;
  schema_chars: number;
} {
  const rendered = signature(schema);
  const form = formExample(schema);
  return {
    signature: rendered,
    form_example: form,
    signature_chars: codePoints(rendered),
    form_example_chars: codePoints(form),
    schema_chars: codePoints(JSON.stringify(schema)),
  };
}
