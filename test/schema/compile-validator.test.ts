import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { validatorOf } from "../support/schema-validators.js";

function compileError(schema: unknown): GatewayError {
  try {
    validatorOf(schema);
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected the schema to be rejected");
}

const taggedUnion = {
  type: "object",
  properties: {
    next: {
      oneOf: [
        {
          type: "object",
          required: ["action"],
          properties: { action: { const: "recall" }, page: { type: "integer" } },
        },
        { type: "object", required: ["action"], properties: { action: { const: "finish" } } },
      ],
    },
  },
};

describe("SchemaValidators.validatorFor", () => {
  it("returns the same compiled validator for two separately parsed identical schemas", () => {
    const text = JSON.stringify({ type: "object", properties: { a: { type: "string" } }, required: ["a"] });
    expect(validatorOf(JSON.parse(text))).toBe(validatorOf(JSON.parse(text)));
  });

  it("returns the same compiled validator for schemas that differ only in key order", () => {
    const first = validatorOf({ type: "object", properties: { b: { type: "integer" } }, required: ["b"] });
    const second = validatorOf({ required: ["b"], properties: { b: { type: "integer" } }, type: "object" });
    expect(second).toBe(first);
  });

  it("compiles a schema with propertyOrdering, x-vendor keys and an unknown format, and validates with it", () => {
    const { validate } = validatorOf({
      type: "object",
      propertyOrdering: ["when", "code"],
      "x-vendor": { owner: "team" },
      properties: {
        when: { type: "string", format: "date-time" },
        code: { type: "string", format: "x-internal-code", "x-vendor-hint": true },
      },
      required: ["when", "code"],
    });
    expect(validate({ when: "2026-01-02T03:04:05Z", code: "anything" })).toEqual([]);
    expect(validate({ when: "yesterday", code: "anything" })).not.toEqual([]);
  });

  it("rejects an external $ref with a 400 INVALID_REQUEST that repeats nothing of the schema", () => {
    const error = compileError({
      type: "object",
      properties: { a: { $ref: "https://schemas.example.com/secret-shape.json" } },
    });
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.status).toBe(400);
    expect(error.details.param).toBe("response_schema");
    expect(error.message).not.toContain("secret-shape");
  });

  it("rejects a schema that breaks its meta-schema with a 400 INVALID_REQUEST", () => {
    expect(compileError({ type: "object", properties: { a: { type: "text" } } }).code).toBe("INVALID_REQUEST");
  });

  it("rejects a value that is no schema at all with a 400 INVALID_REQUEST", () => {
    expect(compileError(42).status).toBe(400);
    expect(compileError(undefined).status).toBe(400);
  });

  it("rejects the same invalid schema again on a second call", () => {
    const schema = { type: "object", properties: { a: { $ref: "other.json#/x" } } };
    expect(compileError(schema).code).toBe("INVALID_REQUEST");
    expect(compileError(structuredClone(schema)).code).toBe("INVALID_REQUEST");
  });

  it("chooses the Ajv dialect from $schema, with 2020-12 when there is none", () => {
    const dialectOf = (metaSchema?: string) =>
      validatorOf({ ...(metaSchema && { $schema: metaSchema }), type: "string", title: metaSchema ?? "none" }).dialect;
    expect(dialectOf("http://json-schema.org/draft-07/schema#")).toBe("draft-07");
    expect(dialectOf("http://json-schema.org/draft-04/schema#")).toBe("draft-07");
    expect(dialectOf("https://json-schema.org/draft/2019-09/schema")).toBe("2019-09");
    expect(dialectOf("https://json-schema.org/draft/2020-12/schema")).toBe("2020-12");
    expect(dialectOf()).toBe("2020-12");
  });

  it("validates a draft-07 schema whose $ref points into definitions", () => {
    const { validate } = validatorOf({
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { id: { type: "string", pattern: "^F[0-9]+$" } },
      type: "object",
      properties: { id: { $ref: "#/definitions/id" }, items: { type: "array", items: { $ref: "#/definitions/id" } } },
    });
    expect(validate({ id: "F1", items: ["F2"] })).toEqual([]);
    expect(validate({ id: "X1", items: ["F2"] })).not.toEqual([]);
  });

  it("validates a 2020-12 schema with $defs and prefixItems", () => {
    const { validate } = validatorOf({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $defs: { level: { enum: ["low", "high"] } },
      type: "array",
      prefixItems: [{ $ref: "#/$defs/level" }, { type: "integer" }],
      items: false,
    });
    expect(validate(["low", 3])).toEqual([]);
    expect(validate(["low", 3, "extra"])).not.toEqual([]);
  });

  it("validates a recursive schema", () => {
    const { validate } = validatorOf({
      $defs: {
        node: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
        },
      },
      $ref: "#/$defs/node",
    });
    expect(validate({ name: "a", children: [{ name: "b", children: [] }] })).toEqual([]);
    expect(validate({ name: "a", children: [{ children: [] }] })).not.toEqual([]);
  });

  it("never mutates the client's schema", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/mutation-check.json",
      $defs: { a: { type: "string" } },
      type: "object",
      properties: { a: { $ref: "#/$defs/a" }, next: structuredClone(taggedUnion.properties.next) },
    };
    const before = structuredClone(schema);
    validatorOf(schema);
    expect(schema).toEqual(before);
  });

  it("gives two different schemas with the same $id validators of their own", () => {
    const first = validatorOf({ $id: "https://example.com/same.json", type: "string" });
    const second = validatorOf({ $id: "https://example.com/same.json", type: "integer" });
    expect(first.validate("text")).toEqual([]);
    expect(second.validate("text")).not.toEqual([]);
    expect(second.validate(3)).toEqual([]);
  });

  it("still compiles a declared discriminator that Ajv cannot use, as a plain oneOf", () => {
    const { validate } = validatorOf({
      type: "object",
      discriminator: { propertyName: "kind", mapping: { a: "#/$defs/a" } },
      oneOf: [{ $ref: "#/$defs/a" }, { $ref: "#/$defs/b" }],
      $defs: {
        a: { type: "object", required: ["kind"], properties: { kind: { const: "a" } } },
        b: { type: "object", required: ["kind"], properties: { kind: { const: "b" } } },
      },
    });
    expect(validate({ kind: "a" })).toEqual([]);
    expect(validate({ kind: "c" })).not.toEqual([]);
  });

  it("rejects a non-object for a tagged oneOf of objects, as plain JSON Schema does", () => {
    const { validate } = validatorOf(taggedUnion);
    expect(validate({ next: { action: "recall", page: 1 } })).toEqual([]);
    expect(validate({ next: "recall" })).not.toEqual([]);
    expect(validate({ next: 3 })).not.toEqual([]);
  });

  it("reports error schema paths from the root of the compiled schema, through inlined references", () => {
    const compiled = validatorOf({
      $defs: { page: { type: "integer" } },
      type: "object",
      properties: { page: { $ref: "#/$defs/page" } },
    });
    expect(compiled.validate({ page: "one" })[0]?.schemaPath).toBe("#/properties/page/type");
  });
});
