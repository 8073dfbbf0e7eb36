import { codePoints } from "./code-points.js";

/*
 * Compact schema signatures (seed 000): a JSON Schema as the few characters a model needs to write a conforming
 * answer: fields (`?` when optional), types with their bounds, enums and constants, alternatives. The full schema
 * stays the validator; a signature is documentation, never a schema copy.
 */

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** How deep a signature follows nested schemas before it writes `…`: a schema nests far less in practice. */
const maxDepth = 32;

/** Where `$ref`s resolve (the root), and the references being rendered (a recursive one is named, not expanded). */
interface Context {
  root: Schema;
  open: Set<string>;
  depth: number;
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

function render(schema: unknown, context: Context): string {
  if (schema === true || schema === undefined) return "any";
  if (schema === false) return "never";
  if (!isSchema(schema)) return "any";
  if (context.depth > maxDepth) return "…";
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
  const context: Context = { root, open: new Set(), depth: 0 };
  const type = root.type;
  if (isSchema(root.properties) && (type === "object" || type === undefined) && root.oneOf === undefined) {
    return fields(root, { ...context, depth: 1 }).join("\n");
  }
  return render(schema, context);
}

/** The label a form example carries, so that a model reads its values as placeholders, not as instructions. */
export const formExampleLabel = "Form example (placeholder values, not a research instruction):";

function example(schema: unknown, root: Schema, open: Set<string>, name: string, depth: number): unknown {
  if (!isSchema(schema) || depth > maxDepth) return null;
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (open.has(ref)) return null;
    open.add(ref);
    try {
      return example(resolve(root, ref), root, open, name, depth + 1);
    } finally {
      open.delete(ref);
    }
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0] ?? null;
  for (const key of ["oneOf", "anyOf", "allOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return example(options[0], root, open, name, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (isSchema(schema.properties) ? "object" : schema.items !== undefined ? "array" : undefined)) {
    case "string":
      return `<${name}>`;
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    case "array":
      return [example(schema.items, root, open, name, depth + 1)];
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([field, property]) => [field, example(property, root, open, field, depth + 1)]),
      );
    }
    default:
      return null;
  }
}

/**
 * A literal JSON object of a schema's form, labelled as a form example: strings are `<field name>` placeholders,
 * numbers their minimum or 0, an enum its first value, alternatives their first, arrays one item. It shows the
 * shape, never what to research; the schema stays the validator, and the gateway's de-duplication does not take
 * the example for a copy of the schema.
 */
export function formExample(schema: unknown): string {
  const root = isSchema(schema) ? schema : {};
  return `${formExampleLabel}\n${JSON.stringify(example(schema, root, new Set(), "value", 0))}`;
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
