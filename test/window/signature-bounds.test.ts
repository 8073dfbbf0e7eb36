import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  describeSchema,
  formExample,
  SchemaExpansionError,
  signature,
  signatureLimits,
} from "../../src/window/index.js";

// Issue 51, item 4: `$ref`s and alternatives inline what they name, so a schema of a kilobyte named a signature of
// gigabytes. A signature and a form example stop at `signatureLimits` and refuse the schema with a
// SchemaExpansionError instead; ordinary schemas render as before (signature.test.ts).

/** `$defs` d0 … d(depth-1), each an `anyOf` of `width` refs to the next, the last a bounded string. */
function chainOfAlternatives(depth: number, width: number, leaf: unknown = { type: "string", maxLength: 10 }) {
  const defs: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) {
    defs[`d${level}`] =
      level === depth - 1 ? leaf : { anyOf: Array.from({ length: width }, () => ({ $ref: `#/$defs/d${level + 1}` })) };
  }
  return { $defs: defs, $ref: "#/$defs/d0" };
}

/** `$defs` d0 … d(depth-1), each an object of `width` fields that all name the next. */
function chainOfObjects(depth: number, width: number) {
  const defs: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) {
    const next = level === depth - 1 ? { type: "integer" } : { $ref: `#/$defs/d${level + 1}` };
    defs[`d${level}`] = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: width }, (_, field) => [`f${field}`, next])),
      required: [],
    };
  }
  return { $defs: defs, $ref: "#/$defs/d0" };
}

function refusal(run: () => unknown): SchemaExpansionError | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (SchemaExpansionError.isInstance(error)) return error;
    throw error;
  }
}

describe("signature bounds (issue 51, item 4)", () => {
  it("refuses the reported schema (1.2 KB, 4^11 alternatives) at once instead of writing 38 MB", () => {
    const schema = chainOfAlternatives(12, 4);
    expect(JSON.stringify(schema).length).toBeLessThan(1_300);
    const started = performance.now();
    const error = refusal(() => describeSchema(schema));
    expect(error?.limit).toBe("maxChars");
    expect(error?.message).toContain(`${signatureLimits.maxChars} characters`);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("refuses objects whose fields all name the next object, in the signature and in the form example", () => {
    const schema = chainOfObjects(14, 3);
    expect(refusal(() => signature(schema))?.limit).toBe("maxChars");
    expect(refusal(() => formExample(schema))?.limit).toBe("maxChars");
  });

  it("refuses a schema nested past the depth limit, naming the depth", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < signatureLimits.maxDepth + 2; level++) schema = { type: "array", items: schema };
    const error = refusal(() => signature(schema));
    expect(error?.limit).toBe("maxDepth");
    expect(error?.message).toContain(`${signatureLimits.maxDepth} levels`);
    expect(refusal(() => formExample(schema))?.limit).toBe("maxDepth");
  });

  it("refuses a large enum inlined many times, though it visits few schemas", () => {
    const schema = chainOfAlternatives(3, 30, { enum: Array.from({ length: 200 }, (_, index) => `value-${index}`) });
    expect(refusal(() => signature(schema))?.limit).toBe("maxChars");
  });

  it("still writes a small expansion in full", () => {
    expect(signature(chainOfAlternatives(3, 2))).toBe("str≤10 | str≤10 | str≤10 | str≤10");
    expect(formExample(chainOfObjects(2, 2))).toBe(
      'Form example (placeholder values, not a research instruction):\n{"f0":{"f0":0,"f1":0},"f1":{"f0":0,"f1":0}}',
    );
  });
});

/** A generated schema: nested alternatives, objects, arrays, enums and refs into a generated `$defs`, cycles allowed. */
const definitions = ["a", "b", "c", "d", "e"];
const schemaNode = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom({ type: "string", maxLength: 40 }, { type: "integer", minimum: 0 }, { type: "boolean" }, true),
    fc.array(fc.string({ maxLength: 30 }), { minLength: 1, maxLength: 60 }).map((values) => ({ enum: values })),
    fc.constantFrom(...definitions).map((name) => ({ $ref: `#/$defs/${name}` })),
    fc.array(tie("node"), { minLength: 1, maxLength: 6 }).map((options) => ({ anyOf: options })),
    fc.array(tie("node"), { minLength: 1, maxLength: 4 }).map((parts) => ({ allOf: parts })),
    tie("node").map((items) => ({ type: "array", items })),
    fc
      .dictionary(fc.string({ minLength: 1, maxLength: 12 }), tie("node"), { minKeys: 1, maxKeys: 6 })
      .map((properties) => ({ type: "object", properties })),
  ),
})).node;
const treeSchema = fc
  .tuple(fc.array(schemaNode, { minLength: definitions.length, maxLength: definitions.length }), schemaNode)
  .map(([defs, root]) => ({
    ...(typeof root === "object" ? root : {}),
    $defs: Object.fromEntries(definitions.map((name, index) => [name, defs[index]])),
  }));

/** One level of a layered schema: how it names the next level `width` times. */
const fan = fc.record({
  kind: fc.constantFrom("anyOf", "oneOf", "allOf", "object", "tuple"),
  width: fc.integer({ min: 1, max: 6 }),
  extra: fc.option(schemaNode, { nil: undefined }),
});

/** Levels l0 … ln, each naming the next through its fan: the pathological shape, widths multiplying per level. */
const layeredSchema = fc.tuple(fc.array(fan, { minLength: 1, maxLength: 24 }), schemaNode).map(([levels, leaf]) => {
  const defs: Record<string, unknown> = { [`l${levels.length}`]: leaf };
  levels.forEach(({ kind, width, extra }, level) => {
    const refs: unknown[] = Array.from({ length: width }, () => ({ $ref: `#/$defs/l${level + 1}` }));
    if (extra !== undefined) refs.push(extra);
    defs[`l${level}`] =
      kind === "object"
        ? { type: "object", properties: Object.fromEntries(refs.map((ref, field) => [`f${field}`, ref])) }
        : kind === "tuple"
          ? { type: "array", prefixItems: refs }
          : { [kind]: refs };
  });
  return { $defs: { ...defs, ...Object.fromEntries(definitions.map((name) => [name, leaf])) }, $ref: "#/$defs/l0" };
});

const generatedSchema = fc.oneof(treeSchema, layeredSchema);

describe("signature bounds on generated schemas", () => {
  it("refuses a schema or answers within the limits, the same each time, with a form example that is JSON", () => {
    fc.assert(
      fc.property(generatedSchema, (schema) => {
        const error = refusal(() => describeSchema(schema));
        if (error !== undefined) {
          expect(error.message.length).toBeGreaterThan(0);
          return;
        }
        const described = describeSchema(schema);
        expect(described.signature.length).toBeLessThanOrEqual(signatureLimits.maxChars);
        const [, json] = described.form_example.split("\n");
        expect((json ?? "").length).toBeLessThanOrEqual(signatureLimits.maxChars);
        JSON.parse(json ?? "");
        expect(describeSchema(schema)).toEqual(described);
      }),
      { numRuns: 300 },
    );
  });

  it("writes a chain of alternatives in full exactly when its full text fits, and refuses it otherwise", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 14 }), fc.integer({ min: 1, max: 6 }), (depth, width) => {
        const leaves = width ** (depth - 1);
        // The full text: every leaf once, separated by " | ", computed before anything is built.
        const fullLength = leaves * "str≤10".length + (leaves - 1) * " | ".length;
        const error = refusal(() => signature(chainOfAlternatives(depth, width)));
        if (fullLength <= signatureLimits.maxChars) {
          expect(error).toBeUndefined();
          expect(signature(chainOfAlternatives(depth, width))).toBe(Array(leaves).fill("str≤10").join(" | "));
        } else {
          expect(error?.limit).toBe("maxChars");
        }
      }),
      { numRuns: 60 },
    );
  });
});
