import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { openApiToJsonSchema } from "../../src/surfaces/gemini/projection/openapi-to-json-schema.js";

describe("openApiToJsonSchema", () => {
  it("lowercases every type", () => {
    expect(openApiToJsonSchema({ type: "STRING" })).toEqual({ type: "string" });
    expect(openApiToJsonSchema({ type: "INTEGER" })).toEqual({ type: "integer" });
    expect(openApiToJsonSchema({ type: "NULL" })).toEqual({ type: "null" });
  });

  it("drops a TYPE_UNSPECIFIED type, which constrains nothing", () => {
    expect(openApiToJsonSchema({ type: "TYPE_UNSPECIFIED", description: "any" })).toEqual({ description: "any" });
  });

  it("turns nullable with a single type into a type pair with null", () => {
    expect(openApiToJsonSchema({ type: "NUMBER", nullable: true })).toEqual({ type: ["number", "null"] });
  });

  it("turns nullable without a single type into an anyOf with a null branch", () => {
    const schema = { anyOf: [{ type: "STRING" }, { type: "INTEGER" }], nullable: true };
    expect(openApiToJsonSchema(schema)).toEqual({
      anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }],
    });
  });

  it("adds null to the enum of a nullable enum", () => {
    const schema = { type: "STRING", enum: ["a", "b"], nullable: true };
    expect(openApiToJsonSchema(schema)).toEqual({ type: ["string", "null"], enum: ["a", "b", null] });
  });

  it("drops nullable: false without widening anything", () => {
    expect(openApiToJsonSchema({ type: "STRING", nullable: false })).toEqual({ type: "string" });
  });

  it("drops format enum and keeps other formats", () => {
    expect(openApiToJsonSchema({ type: "STRING", format: "enum", enum: ["x"] })).toEqual({
      type: "string",
      enum: ["x"],
    });
    expect(openApiToJsonSchema({ type: "STRING", format: "date-time" })).toEqual({
      type: "string",
      format: "date-time",
    });
  });

  it("turns the stringified values of a numeric or boolean enum back into values", () => {
    expect(openApiToJsonSchema({ type: "INTEGER", format: "enum", enum: ["1", "2"] })).toEqual({
      type: "integer",
      enum: [1, 2],
    });
    expect(openApiToJsonSchema({ type: "BOOLEAN", enum: ["true", "false"] })).toEqual({
      type: "boolean",
      enum: [true, false],
    });
  });

  it("drops propertyOrdering and example", () => {
    const schema = {
      type: "OBJECT",
      properties: { a: { type: "STRING", example: "hello" } },
      propertyOrdering: ["a"],
      example: { a: "hello" },
    };
    expect(openApiToJsonSchema(schema)).toEqual({ type: "object", properties: { a: { type: "string" } } });
  });

  it("turns numeric strings of the count keywords into numbers", () => {
    const schema = {
      type: "OBJECT",
      minProperties: "1",
      maxProperties: "3",
      properties: {
        list: {
          type: "ARRAY",
          minItems: "2",
          maxItems: "5",
          items: { type: "STRING", minLength: "1", maxLength: "9" },
        },
      },
    };
    expect(openApiToJsonSchema(schema)).toEqual({
      type: "object",
      minProperties: 1,
      maxProperties: 3,
      properties: {
        list: { type: "array", minItems: 2, maxItems: 5, items: { type: "string", minLength: 1, maxLength: 9 } },
      },
    });
  });

  it("leaves counts that are already numbers as they are", () => {
    expect(openApiToJsonSchema({ type: "ARRAY", minItems: 1 })).toEqual({ type: "array", minItems: 1 });
  });

  it("recurses through properties, items and anyOf", () => {
    const schema = {
      type: "OBJECT",
      properties: {
        rows: {
          type: "ARRAY",
          items: {
            anyOf: [{ type: "OBJECT", properties: { n: { type: "INTEGER", nullable: true } } }, { type: "STRING" }],
          },
        },
      },
    };
    expect(openApiToJsonSchema(schema)).toEqual({
      type: "object",
      properties: {
        rows: {
          type: "array",
          items: { anyOf: [{ type: "object", properties: { n: { type: ["integer", "null"] } } }, { type: "string" }] },
        },
      },
    });
  });

  it("keeps required, description, title, bounds and unknown keywords", () => {
    const schema = {
      type: "NUMBER",
      title: "Total",
      description: "The total.",
      minimum: 0,
      maximum: 10,
      default: 1,
      "x-vendor": { keep: true },
    };
    expect(openApiToJsonSchema(schema)).toEqual({ ...schema, type: "number" });
  });

  it("does not treat a property named like a dropped keyword as that keyword", () => {
    const schema = { type: "OBJECT", properties: { example: { type: "STRING" }, nullable: { type: "BOOLEAN" } } };
    expect(openApiToJsonSchema(schema)).toEqual({
      type: "object",
      properties: { example: { type: "string" }, nullable: { type: "boolean" } },
    });
  });

  it("returns anything that is not a schema object as an equal copy", () => {
    expect(openApiToJsonSchema(true)).toBe(true);
    expect(openApiToJsonSchema(null)).toBe(null);
    const list = [{ type: "STRING" }];
    const copied = openApiToJsonSchema(list);
    expect(copied).toEqual(list);
    expect(copied).not.toBe(list);
  });

  it("never mutates its input and shares no objects with it", () => {
    const schema = {
      type: "OBJECT",
      nullable: true,
      propertyOrdering: ["a", "b"],
      required: ["a"],
      properties: {
        a: { type: "STRING", enum: ["x"], nullable: true, format: "enum" },
        b: { type: "ARRAY", maxItems: "3", items: { anyOf: [{ type: "INTEGER" }], nullable: true } },
      },
    };
    const before = structuredClone(schema);
    const converted = openApiToJsonSchema(schema) as { required: string[]; properties: { a: unknown } };
    expect(schema).toEqual(before);
    expect(converted.required).not.toBe(schema.required);
    expect(converted.properties.a).not.toBe(schema.properties.a);
  });

  it("produces a schema that a strict Ajv 2020 compiles and that accepts null where nullable allowed it", () => {
    const converted = openApiToJsonSchema({
      type: "OBJECT",
      properties: {
        status: { type: "STRING", format: "enum", enum: ["open", "closed"], nullable: true },
        tags: { type: "ARRAY", minItems: "1", items: { type: "STRING" }, example: ["a"] },
        when: { type: "STRING", format: "date-time" },
      },
      required: ["status", "tags"],
      propertyOrdering: ["status", "tags", "when"],
    });
    const ajv = new Ajv2020({ strict: true });
    addFormats.default(ajv);
    const validate = ajv.compile(converted as object);
    expect(validate({ status: null, tags: ["a"], when: "2026-01-01T00:00:00Z" })).toBe(true);
    expect(validate({ status: "open", tags: [] })).toBe(false);
    expect(validate({ status: "other", tags: ["a"] })).toBe(false);
  });
});
