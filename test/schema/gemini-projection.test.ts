import { describe, expect, it } from "vitest";
import { type ProjectionField, projectForGemini } from "../../src/surfaces/gemini/projection/projection.js";

const fields: readonly ProjectionField[] = ["responseJsonSchema", "responseSchema"];

function nested(schema: unknown, field: ProjectionField = "responseJsonSchema") {
  return projectForGemini(schema, "nested", field);
}

function outer(schema: unknown, field: ProjectionField = "responseJsonSchema") {
  return projectForGemini(schema, "outer", field);
}

/** Nested, with alternatives reduced to their common shape (investigation.bounded's setting). */
function common(schema: unknown, field: ProjectionField = "responseJsonSchema") {
  return projectForGemini(schema, "nested", field, { unions: "common_shape" });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** Every object and array reachable from `value`. */
function objectsIn(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value === "object" && value !== null && !into.has(value)) {
    into.add(value);
    for (const item of Object.values(value)) objectsIn(item, into);
  }
  return into;
}

const person = {
  type: "object",
  description: "A person.",
  propertyOrdering: ["name", "tags", "address"],
  properties: {
    name: { type: "string", description: "Full name." },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
    address: {
      type: "object",
      properties: { city: { type: "string" }, zip: { type: "string" } },
      required: ["city"],
    },
  },
  required: ["name"],
};

describe("projectForGemini in mode none", () => {
  it.each(fields)("returns the schema unchanged and omits nothing for %s", (field) => {
    const schema = { type: "object", properties: { id: { type: "string", pattern: "^x" } } };
    const projection = projectForGemini(schema, "none", field);
    expect(projection.schema).toEqual({ type: "object", properties: { id: { type: "string", pattern: "^x" } } });
    expect(projection.omitted).toEqual([]);
  });
});

describe("projectForGemini in mode nested for responseJsonSchema", () => {
  it("keeps type, properties, required, items, enum, description and propertyOrdering at every depth", () => {
    expect(nested(person).schema).toEqual(person);
    expect(nested(person).omitted).toEqual([]);
  });

  it("turns const into a one-value enum", () => {
    expect(nested({ const: "go" }).schema).toEqual({ type: "string", enum: ["go"] });
  });

  it("keeps a type array with null as the nullable form", () => {
    expect(nested({ type: ["string", "null"] }).schema).toEqual({ type: ["string", "null"] });
  });

  it("turns anyOf of a type and null into a nullable type without listing it", () => {
    const projection = nested({ anyOf: [{ type: "integer" }, { type: "null" }] });
    expect(projection.schema).toEqual({ type: ["integer", "null"] });
    expect(projection.omitted).toEqual([]);
  });

  it("keeps null in the enum of a nullable enum", () => {
    const schema = { anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] };
    expect(nested(schema).schema).toEqual({ type: ["string", "null"], enum: ["a", "b", null] });
  });

  it("widens a node with OpenAPI nullable: true to accept null", () => {
    expect(nested({ type: "string", nullable: true }).schema).toEqual({ type: ["string", "null"] });
  });

  it("keeps numeric enums", () => {
    expect(nested({ type: "integer", enum: [1, 2] }).schema).toEqual({ type: "integer", enum: [1, 2] });
  });

  it("drops enum values whose type the node does not accept", () => {
    expect(nested({ type: "string", enum: ["a", 1] }).schema).toEqual({ type: "string", enum: ["a"] });
  });

  it("drops an enum of objects and lists it", () => {
    const projection = nested({ properties: { pair: { enum: [{ a: 1 }, [1]] } } });
    expect(projection.schema).toEqual({ properties: { pair: { type: ["object", "array"] } } });
    expect(projection.omitted).toContain("/properties/pair: enum (object or array values)");
  });

  it("takes a true subschema as an open node", () => {
    expect(nested({ type: "object", properties: { any: true } }).schema).toEqual({
      type: "object",
      properties: { any: {} },
    });
  });

  it("leaves a property whose subschema is false out of properties and required", () => {
    const schema = { type: "object", properties: { gone: false, kept: { type: "string" } }, required: ["gone"] };
    const projection = nested(schema);
    expect(projection.schema).toEqual({ type: "object", properties: { kept: { type: "string" } } });
    expect(projection.omitted).toContain("/properties/gone: matches no instance");
  });

  it("leaves out a required name that has no property schema and lists it", () => {
    const projection = nested({ type: "object", properties: { a: { type: "string" } }, required: ["a", "b"] });
    expect(projection.schema).toEqual({ type: "object", properties: { a: { type: "string" } }, required: ["a"] });
    expect(projection.omitted).toEqual(["/: required (names without a property schema)"]);
  });

  it("keeps a property named __proto__ as an own property", () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    const projected = nested(schema).schema as { properties: object };
    expect(Object.keys(projected.properties)).toEqual(["__proto__"]);
  });
});

describe("projectForGemini leaves out what stays with local validation", () => {
  const leftOut: Record<string, unknown> = {
    pattern: "^F\\d+$",
    minLength: 1,
    maxLength: 9,
    format: "date-time",
    $comment: "note",
    examples: ["F1"],
    default: "F1",
    title: "Id",
    "x-vendor": true,
    madeUpKeyword: 1,
  };

  it.each(Object.keys(leftOut))("lists %s with the pointer of its node", (keyword) => {
    const schema = { type: "object", properties: { id: { type: "string", [keyword]: leftOut[keyword] } } };
    const projection = nested(schema);
    expect(projection.schema).toEqual({ type: "object", properties: { id: { type: "string" } } });
    expect(projection.omitted).toEqual([`/properties/id: ${keyword}`]);
  });

  it("lists number bounds, array bounds and object keywords under their pointers", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/bounds.json",
      type: "object",
      additionalProperties: false,
      patternProperties: { "^x-": { type: "string" } },
      dependentRequired: { a: ["b"] },
      properties: {
        score: { type: "number", minimum: 0, maximum: 1, exclusiveMaximum: 2, multipleOf: 0.5 },
        list: { type: "array", minItems: 1, maxItems: 3, uniqueItems: true, items: { type: "integer" } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords.
        choice: { type: "string", not: { const: "x" }, if: { const: "a" }, then: { minLength: 1 }, else: {} },
      },
      discriminator: { propertyName: "kind" },
    };
    expect(nested(schema).omitted).toEqual([
      "/: $schema",
      "/: $id",
      "/: additionalProperties",
      "/: patternProperties (key patterns; their values are admitted for any key)",
      "/: dependentRequired",
      "/properties/score: minimum",
      "/properties/score: maximum",
      "/properties/score: exclusiveMaximum",
      "/properties/score: multipleOf",
      "/properties/list: minItems",
      "/properties/list: maxItems",
      "/properties/list: uniqueItems",
      "/properties/choice: not",
      "/properties/choice: if",
      "/properties/choice: then",
      "/properties/choice: else",
      "/: discriminator",
    ]);
  });

  it("escapes property names in the listed pointers", () => {
    const schema = { properties: { "a/b~c": { type: "string", pattern: "x" } } };
    expect(nested(schema).omitted).toEqual(["/properties/a~1b~0c: pattern"]);
  });
});

describe("projectForGemini in mode nested for responseSchema", () => {
  it("writes one uppercase type per node", () => {
    expect(nested(person, "responseSchema").schema).toEqual({
      type: "OBJECT",
      description: "A person.",
      propertyOrdering: ["name", "tags", "address"],
      properties: {
        name: { type: "STRING", description: "Full name." },
        tags: { type: "ARRAY", items: { type: "STRING", enum: ["a", "b"] } },
        address: {
          type: "OBJECT",
          properties: { city: { type: "STRING" }, zip: { type: "STRING" } },
          required: ["city"],
        },
      },
      required: ["name"],
    });
  });

  it("turns a type array with null into one type and nullable", () => {
    expect(nested({ type: ["integer", "null"] }, "responseSchema").schema).toEqual({ type: "INTEGER", nullable: true });
  });

  it("turns a nullable string enum into a string enum and nullable", () => {
    const schema = { type: ["string", "null"], enum: ["a", null] };
    expect(nested(schema, "responseSchema").schema).toEqual({ type: "STRING", enum: ["a"], nullable: true });
  });

  it("writes a union of several types as an anyOf of one node per type", () => {
    const schema = { anyOf: [{ type: "string" }, { type: "array", items: { type: "integer" } }, { type: "null" }] };
    expect(nested(schema, "responseSchema").schema).toEqual({
      anyOf: [{ type: "STRING" }, { type: "ARRAY", items: { type: "INTEGER" } }],
      nullable: true,
    });
  });

  it("drops a non-string enum and lists it", () => {
    const schema = { type: "object", properties: { level: { type: "integer", enum: [1, 2, 3] } } };
    const projection = nested(schema, "responseSchema");
    expect(projection.schema).toEqual({ type: "OBJECT", properties: { level: { type: "INTEGER" } } });
    expect(projection.omitted).toContain("/properties/level: enum (non-string values)");
  });

  it("drops a boolean const and lists it", () => {
    const projection = nested({ type: "object", properties: { ok: { const: true } } }, "responseSchema");
    expect(projection.schema).toEqual({ type: "OBJECT", properties: { ok: { type: "BOOLEAN" } } });
    expect(projection.omitted).toEqual(["/properties/ok: enum (non-string values)"]);
  });

  it("drops a string enum with an empty value, which Gemini rejects, and lists it", () => {
    const projection = nested({ type: "string", enum: ["", "a"] }, "responseSchema");
    expect(projection.schema).toEqual({ type: "STRING" });
    expect(projection.omitted).toEqual(["/: enum (empty string value)"]);
  });

  it("gives an array without items an open items node", () => {
    expect(nested({ type: "array" }, "responseSchema").schema).toEqual({ type: "ARRAY", items: {} });
  });

  it("leaves a node without a known type open, without a type", () => {
    expect(nested({ type: "object", properties: { any: {} } }, "responseSchema").schema).toEqual({
      type: "OBJECT",
      properties: { any: {} },
    });
  });

  it("leaves out the structure of a node without a type and lists it", () => {
    const projection = nested({ properties: { level: { type: "integer" } } }, "responseSchema");
    expect(projection.schema).toEqual({});
    expect(projection.omitted).toEqual(["/: structure of a node without a single type"]);
  });

  it("never writes an empty properties map, which Gemini rejects for OBJECT", () => {
    expect(nested({ type: "object", properties: {} }, "responseSchema").schema).toEqual({ type: "OBJECT" });
  });

  it("leaves a null-only node open and nullable, and lists it", () => {
    const projection = nested({ type: "object", properties: { nothing: { type: "null" } } }, "responseSchema");
    expect(projection.schema).toEqual({ type: "OBJECT", properties: { nothing: { nullable: true } } });
    expect(projection.omitted).toEqual(["/properties/nothing: type null (responseSchema has no null-only type)"]);
  });

  it("never writes additionalProperties, $defs or $ref", () => {
    const schema = {
      type: "object",
      additionalProperties: false,
      properties: { item: { $ref: "#/$defs/item" } },
      $defs: { item: { type: "object", additionalProperties: { type: "string" }, properties: {} } },
    };
    const text = JSON.stringify(nested(schema, "responseSchema").schema);
    for (const keyword of ["additionalProperties", "$defs", "$ref"]) expect(text).not.toContain(keyword);
  });
});

describe("projectForGemini with allOf", () => {
  it.each(fields)("merges the branches into one node for %s", (field) => {
    const schema = {
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: ["object", "null"], properties: { b: { type: "integer" } }, required: ["b"] },
      ],
    };
    const expected =
      field === "responseJsonSchema"
        ? { type: "object", properties: { a: { type: "string" }, b: { type: "integer" } }, required: ["a", "b"] }
        : { type: "OBJECT", properties: { a: { type: "STRING" }, b: { type: "INTEGER" } }, required: ["a", "b"] };
    const projection = nested(schema, field);
    expect(projection.schema).toEqual(expected);
    expect(projection.omitted).toEqual([]);
  });

  it("intersects the enums and the schemas of a property both branches declare", () => {
    const schema = {
      allOf: [{ properties: { kind: { enum: ["a", "b", "c"] } } }, { properties: { kind: { enum: ["b", "c", "d"] } } }],
    };
    expect(nested(schema).schema).toEqual({ properties: { kind: { type: "string", enum: ["b", "c"] } } });
  });

  it("keeps integer where one branch says number and the other integer", () => {
    expect(nested({ allOf: [{ type: "number" }, { type: "integer" }] }).schema).toEqual({ type: "integer" });
  });

  it("drops a property that another branch forbids with additionalProperties false", () => {
    const schema = {
      allOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { b: { type: "string" } }, additionalProperties: false },
      ],
    };
    expect(nested(schema).schema).toEqual({ type: "object", properties: { b: { type: "string" } } });
  });

  it.each(fields)("falls back to an open node when the branches conflict, and lists it, for %s", (field) => {
    const schema = { type: "object", properties: { x: { allOf: [{ type: "string" }, { type: "integer" }] } } };
    const projection = nested(schema, field);
    expect(projection.schema).toEqual(field === "responseJsonSchema" ? { type: "object" } : { type: "OBJECT" });
    expect(projection.omitted).toEqual(["/properties/x: matches no instance"]);
  });
});

const toolAction = {
  type: "object",
  description: "The next step.",
  oneOf: [
    {
      type: "object",
      additionalProperties: false,
      properties: {
        action: { const: "tool/project.query" },
        arguments: {
          type: "object",
          additionalProperties: false,
          properties: { kind: { enum: ["files", "symbols"] }, query: { type: "string" } },
          required: ["kind", "query"],
        },
      },
      required: ["action", "arguments"],
    },
    {
      type: "object",
      additionalProperties: false,
      properties: {
        action: { const: "finish" },
        arguments: {
          type: "object",
          additionalProperties: false,
          properties: { kind: { const: "final" }, limit: { type: "integer" } },
          required: ["kind"],
        },
        reason: { type: "string" },
      },
      required: ["action"],
    },
  ],
};

describe("projectForGemini with oneOf and anyOf reduced to their common shape", () => {
  it("reduces object alternatives to their common shape: union of properties, intersection of required", () => {
    expect(common(toolAction).schema).toEqual({
      type: "object",
      description: "The next step.",
      properties: {
        action: { type: "string", enum: ["tool/project.query", "finish"] },
        arguments: {
          type: "object",
          properties: {
            kind: { type: "string", enum: ["files", "symbols", "final"] },
            query: { type: "string" },
            limit: { type: "integer" },
          },
          required: ["kind"],
        },
        reason: { type: "string" },
      },
      required: ["action"],
    });
  });

  it("writes the common shape of object alternatives for responseSchema too", () => {
    const schema = common(toolAction, "responseSchema").schema as {
      properties: { arguments: { properties: { kind: unknown } } };
    };
    expect(schema.properties.arguments.properties.kind).toEqual({
      type: "STRING",
      enum: ["files", "symbols", "final"],
    });
  });

  it("lists the reduction under the pointer of the oneOf node", () => {
    expect(common({ type: "object", properties: { next: toolAction } }).omitted).toEqual([
      "/properties/next/oneOf/0: additionalProperties",
      "/properties/next/oneOf/0/properties/arguments: additionalProperties",
      "/properties/next/oneOf/1: additionalProperties",
      "/properties/next/oneOf/1/properties/arguments: additionalProperties",
      "/properties/next: oneOf reduced to common shape",
    ]);
  });

  it("leaves a property open when another alternative allows any extra property", () => {
    const schema = {
      anyOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { b: { type: "string" } } },
      ],
    };
    expect(common(schema).schema).toEqual({ type: "object", properties: { a: {}, b: {} } });
  });

  it("gives a property with different types in different alternatives all of them", () => {
    const schema = {
      oneOf: [
        { type: "object", additionalProperties: false, properties: { v: { type: "string" } } },
        { type: "object", additionalProperties: false, properties: { v: { type: "integer" } } },
      ],
    };
    expect(common(schema).schema).toEqual({ type: "object", properties: { v: { type: ["string", "integer"] } } });
    expect(common(schema, "responseSchema").schema).toEqual({
      type: "OBJECT",
      properties: { v: { anyOf: [{ type: "STRING" }, { type: "INTEGER" }] } },
    });
  });

  it("keeps the structure of each type, but not an enum of one type, when alternatives mix objects and scalars", () => {
    const schema = {
      anyOf: [
        { type: "string", enum: ["none"] },
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      ],
    };
    expect(common(schema).schema).toEqual({
      type: ["string", "object"],
      properties: { id: { type: "string" } },
      required: ["id"],
    });
    expect(common(schema, "responseSchema").schema).toEqual({
      anyOf: [{ type: "STRING" }, { type: "OBJECT", properties: { id: { type: "STRING" } }, required: ["id"] }],
    });
  });

  it("intersects oneOf with the keywords beside it", () => {
    const schema = {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
      oneOf: [{ required: ["a"] }, { required: ["a", "b"] }],
    };
    expect(common(schema).schema).toEqual({ type: "object", properties: { id: { type: "string" } }, required: ["id"] });
  });

  it("reduces positional items to one item shape that accepts each of them", () => {
    const schema = { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false };
    const projection = common(schema);
    expect(projection.schema).toEqual({ type: "array", items: { type: ["string", "integer"] } });
    expect(projection.omitted).toEqual(["/: prefixItems"]);
  });

  it("leaves items open when positional items may be followed by anything", () => {
    const schema = { $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }] };
    expect(common(schema).schema).toEqual({ type: "array" });
  });
});

describe("projectForGemini keeps alternatives as anyOf for responseJsonSchema", () => {
  it("writes each tool alternative with its own structure, and the node's description once", () => {
    expect(nested(toolAction).schema).toEqual({
      description: "The next step.",
      anyOf: [
        {
          type: "object",
          properties: {
            action: { type: "string", enum: ["tool/project.query"] },
            arguments: {
              type: "object",
              properties: { kind: { type: "string", enum: ["files", "symbols"] }, query: { type: "string" } },
              required: ["kind", "query"],
            },
          },
          required: ["action", "arguments"],
        },
        {
          type: "object",
          properties: {
            action: { type: "string", enum: ["finish"] },
            arguments: {
              type: "object",
              properties: { kind: { type: "string", enum: ["final"] }, limit: { type: "integer" } },
              required: ["kind"],
            },
            reason: { type: "string" },
          },
          required: ["action"],
        },
      ],
    });
  });

  it("lists a oneOf as kept as anyOf, since that only one alternative matches is checked locally", () => {
    expect(nested({ type: "object", properties: { next: toolAction } }).omitted).toContain(
      "/properties/next: oneOf kept as anyOf (that only one alternative matches is checked locally)",
    );
    expect(nested({ anyOf: [{ type: "string" }, { type: "integer" }] }).omitted).toEqual([]);
  });

  it("keeps an enum that belongs to one alternative only", () => {
    const schema = {
      anyOf: [
        { type: "string", enum: ["none"] },
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      ],
    };
    expect(nested(schema).schema).toEqual({
      anyOf: [
        { type: "string", enum: ["none"] },
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      ],
    });
  });

  it("still writes an alternative and null as a nullable type", () => {
    expect(nested({ anyOf: [{ type: "integer" }, { type: "null" }] }).schema).toEqual({ type: ["integer", "null"] });
  });

  it("applies the keywords beside the alternatives to each of them", () => {
    const schema = {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
      anyOf: [{ properties: { a: { type: "string" } } }, { properties: { b: { type: "integer" } }, required: ["b"] }],
    };
    expect(nested(schema).schema).toEqual({
      anyOf: [
        { type: "object", properties: { id: { type: "string" }, a: { type: "string" } }, required: ["id"] },
        { type: "object", properties: { id: { type: "string" }, b: { type: "integer" } }, required: ["id", "b"] },
      ],
    });
  });

  it("reduces alternatives to their common shape where the keywords beside them would repeat in each, and lists it", () => {
    const names = ["name", "email", "phone", "street", "city", "postal_code", "country", "notes"];
    const schema = {
      type: "object",
      properties: Object.fromEntries(names.map((name) => [name, { type: "string" }])),
      anyOf: [{ required: ["email"] }, { required: ["phone"] }],
    };
    const projection = nested(schema);
    expect(projection.schema).toEqual({ type: "object", properties: schema.properties });
    expect(projection.omitted).toEqual([
      "/: alternatives reduced to common shape (what applies beside them would repeat in each)",
    ]);
  });

  it("keeps references in a oneOf whose neighbouring keywords their definitions already imply", () => {
    const pet = (kind: string, extra: string) => ({
      type: "object",
      properties: {
        kind: { const: kind },
        [extra]: { type: "string", description: `The ${extra} as the owner says.` },
      },
      required: ["kind", extra],
    });
    const schema = {
      type: "object",
      properties: {
        pets: {
          type: "array",
          items: {
            type: "object",
            properties: { kind: { type: "string", enum: ["cat", "dog"] } },
            required: ["kind"],
            oneOf: [{ $ref: "#/$defs/Cat" }, { $ref: "#/$defs/Dog" }],
          },
        },
        favourite: { oneOf: [{ $ref: "#/$defs/Cat" }, { $ref: "#/$defs/Dog" }] },
      },
      $defs: { Cat: pet("cat", "colour"), Dog: pet("dog", "breed") },
    };
    const projected = nested(schema).schema as Record<string, unknown>;
    const alternatives = { anyOf: [{ $ref: "#/$defs/Cat" }, { $ref: "#/$defs/Dog" }] };
    expect(projected.properties).toEqual({ pets: { type: "array", items: alternatives }, favourite: alternatives });
    expect(Object.keys(projected.$defs as object)).toEqual(["Cat", "Dog"]);
  });

  it("writes alternatives that differ only in what the projection leaves out once", () => {
    const schema = {
      anyOf: [
        { type: "string", minLength: 1 },
        { type: "string", pattern: "^x" },
      ],
    };
    expect(nested(schema).schema).toEqual({ type: "string" });
  });

  it("leaves out an alternative that matches nothing", () => {
    const projection = nested({ anyOf: [{ type: "string" }, false, { type: "integer" }] });
    expect(projection.schema).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }] });
    expect(projection.omitted).toEqual(["/anyOf/1: matches no instance"]);
  });

  it("reduces the alternatives to their common shape with unions common_shape, for outer and for responseSchema", () => {
    const reduced = common(toolAction).schema;
    expect(reduced).toMatchObject({
      type: "object",
      properties: { action: { enum: ["tool/project.query", "finish"] } },
    });
    expect(outer(toolAction).schema).toMatchObject({ type: "object", properties: { action: { type: "string" } } });
    expect(nested(toolAction, "responseSchema").schema).toEqual(common(toolAction, "responseSchema").schema);
    expect(JSON.stringify(nested(toolAction, "responseSchema").schema)).not.toContain("anyOf");
  });
});

describe("projectForGemini keeps maps as maps for responseJsonSchema", () => {
  it("writes a schema-valued additionalProperties as additionalProperties with the projected value schema", () => {
    const projection = nested({ type: "object", additionalProperties: { type: "integer", minimum: 0 } });
    expect(projection.schema).toEqual({ type: "object", additionalProperties: { type: "integer" } });
    expect(projection.omitted).toEqual(["/additionalProperties: minimum"]);
  });

  it("keeps the declared properties beside the map", () => {
    const schema = {
      type: "object",
      properties: { total: { type: "number" } },
      additionalProperties: { type: "string" },
    };
    expect(nested(schema).schema).toEqual(schema);
  });

  it("admits the keys of patternProperties with the union of their values and of additionalProperties", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string" } },
      patternProperties: { "^x-": { type: "string" }, "^n-": { type: "number" } },
      additionalProperties: { type: "boolean" },
    };
    const projection = nested(schema);
    expect(projection.schema).toEqual({
      type: "object",
      properties: { name: { type: "string" } },
      additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }] },
    });
    expect(projection.omitted).toEqual(["/: patternProperties (key patterns; their values are admitted for any key)"]);
  });

  it("admits only the pattern values when additionalProperties is false, and lists both", () => {
    const schema = { type: "object", patternProperties: { "^x-": { type: "string" } }, additionalProperties: false };
    const projection = nested(schema);
    expect(projection.schema).toEqual({ type: "object", additionalProperties: { type: "string" } });
    expect(projection.omitted).toEqual([
      "/: additionalProperties",
      "/: patternProperties (key patterns; their values are admitted for any key)",
    ]);
  });

  it("admits any value when patternProperties stands without additionalProperties", () => {
    const schema = { type: "object", patternProperties: { "^x-": { type: "string" } } };
    expect(nested(schema).schema).toEqual({ type: "object", additionalProperties: {} });
  });

  it("writes additionalProperties true as an open map, and false not at all", () => {
    expect(nested({ type: "object", additionalProperties: true }).schema).toEqual({
      type: "object",
      additionalProperties: {},
    });
    const closed = nested({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false });
    expect(closed.schema).toEqual({ type: "object", properties: { a: { type: "string" } } });
    expect(closed.omitted).toEqual(["/: additionalProperties"]);
  });

  it.each(fields)("lists propertyNames, minProperties and maxProperties for %s", (field) => {
    const schema = {
      type: "object",
      additionalProperties: { type: "string" },
      propertyNames: { pattern: "^[a-z]+$" },
      minProperties: 1,
      maxProperties: 3,
    };
    expect(nested(schema, field).omitted).toEqual(
      expect.arrayContaining(["/: propertyNames", "/: minProperties", "/: maxProperties"]),
    );
  });

  it("says for responseSchema that a map's entries are lost", () => {
    const schema = {
      type: "object",
      properties: { labels: { type: "object", additionalProperties: { type: "string" } } },
      patternProperties: { "^x-": { type: "integer" } },
    };
    const projection = nested(schema, "responseSchema");
    expect(projection.schema).toEqual({ type: "OBJECT", properties: { labels: { type: "OBJECT" } } });
    expect(projection.omitted).toEqual([
      "/properties/labels: additionalProperties (map entries; responseSchema has no additionalProperties)",
      "/: patternProperties (map entries; responseSchema has no additionalProperties)",
    ]);
  });

  it("keeps the top-level map's value type in mode outer", () => {
    const schema = { type: "object", additionalProperties: { type: "object", properties: { n: { type: "integer" } } } };
    const projection = outer(schema);
    expect(projection.schema).toEqual({ type: "object", additionalProperties: { type: "object" } });
    expect(projection.omitted).toEqual(["/additionalProperties: nested structure"]);
  });
});

describe("projectForGemini writes enums the way Gemini documents them", () => {
  it("leaves out the type beside an enum of several types, which adds nothing", () => {
    expect(nested({ enum: [1, "two", true] }).schema).toEqual({ enum: [1, "two", true] });
    expect(nested({ type: ["string", "null"], enum: ["a", null] }).schema).toEqual({
      type: ["string", "null"],
      enum: ["a", null],
    });
  });

  it("leaves out an enum that lists every value of its type", () => {
    expect(nested({ const: null }).schema).toEqual({ type: "null" });
    expect(nested({ enum: [true, false] }).schema).toEqual({ type: "boolean" });
    expect(nested({ const: false }).schema).toEqual({ type: "boolean", enum: [false] });
  });
});

describe("projectForGemini in mode outer", () => {
  const brief = {
    type: "object",
    properties: {
      status: { type: "string", enum: ["ok", "blocked"], maxLength: 10 },
      update: {
        type: "object",
        properties: { findings: { type: "array", items: { type: "object", properties: { id: { pattern: "x" } } } } },
        required: ["findings"],
      },
      refs: { type: "array", items: { type: "string" } },
      count: { type: ["integer", "null"], minimum: 0 },
    },
    required: ["status", "update"],
  };

  it("keeps the top level and reduces each property to its type and scalar enum", () => {
    expect(outer(brief).schema).toEqual({
      type: "object",
      properties: {
        status: { type: "string", enum: ["ok", "blocked"] },
        update: { type: "object" },
        refs: { type: "array" },
        count: { type: ["integer", "null"] },
      },
      required: ["status", "update"],
    });
  });

  it("gives an array property an open items node for responseSchema", () => {
    expect(outer(brief, "responseSchema").schema).toEqual({
      type: "OBJECT",
      properties: {
        status: { type: "STRING", enum: ["ok", "blocked"] },
        update: { type: "OBJECT" },
        refs: { type: "ARRAY", items: {} },
        count: { type: "INTEGER", nullable: true },
      },
      required: ["status", "update"],
    });
  });

  it("lists each nested structure once and no keyword below it", () => {
    expect(outer(brief).omitted).toEqual([
      "/properties/status: maxLength",
      "/properties/count: minimum",
      "/properties/update: nested structure",
      "/properties/refs: nested structure",
    ]);
  });

  it("reads the top level through a $ref and a oneOf", () => {
    const schema = { $ref: "#/$defs/step", $defs: { step: toolAction } };
    expect(outer(schema).schema).toEqual({
      type: "object",
      description: "The next step.",
      properties: {
        action: { type: "string", enum: ["tool/project.query", "finish"] },
        arguments: { type: "object" },
        reason: { type: "string" },
      },
      required: ["action"],
    });
  });
});

describe("projectForGemini purity", () => {
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      next: { $ref: "#/$defs/next" },
      tags: { type: "array", items: { enum: [{ a: 1 }, "x"] } },
      tree: { $ref: "#/$defs/tree" },
    },
    required: ["next"],
    $defs: {
      next: toolAction,
      tree: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/tree" } } } },
    },
  };

  for (const mode of ["nested", "outer"] as const) {
    it.each(fields)(`never mutates a deep-frozen input in mode ${mode} for %s`, (field) => {
      const frozen = deepFreeze(structuredClone(schema));
      expect(() => projectForGemini(frozen, mode, field)).not.toThrow();
      expect(frozen).toEqual(schema);
    });

    it.each(fields)(`returns a schema that shares no object with the input in mode ${mode} for %s`, (field) => {
      const input = objectsIn(schema);
      for (const object of objectsIn(projectForGemini(schema, mode, field).schema)) {
        expect(input.has(object)).toBe(false);
      }
    });
  }

  it("gives the same projection for the same schema", () => {
    expect(nested(schema)).toEqual(nested(structuredClone(schema)));
  });
});
