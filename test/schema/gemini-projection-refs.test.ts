import { describe, expect, it } from "vitest";
import { type ProjectionField, type ProjectionMode, projectForGemini } from "../../src/schema/gemini-projection.js";
import { expectInvalidRequest } from "../surfaces/gateway-error-of.js";

const fields: readonly ProjectionField[] = ["responseJsonSchema", "responseSchema"];
const modes: readonly ProjectionMode[] = ["nested", "outer"];

function nested(schema: unknown, field: ProjectionField = "responseJsonSchema") {
  return projectForGemini(schema, "nested", field);
}

const item = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
const inlined = { type: "object", properties: { item: item }, required: ["item"] };

describe("projectForGemini $ref resolution", () => {
  it("inlines a 2020-12 $defs reference", () => {
    const schema = {
      type: "object",
      properties: { item: { $ref: "#/$defs/item" } },
      required: ["item"],
      $defs: { item },
    };
    expect(nested(schema).schema).toEqual(inlined);
  });

  it("inlines a draft-07 definitions reference", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { item: { $ref: "#/definitions/item" } },
      required: ["item"],
      definitions: { item },
    };
    expect(nested(schema).schema).toEqual(inlined);
  });

  it("inlines a reference to any place in the document", () => {
    const schema = { type: "object", properties: { item, copy: { $ref: "#/properties/item" } } };
    expect(nested(schema).schema).toEqual({ type: "object", properties: { item, copy: item } });
  });

  it("follows JSON pointer escapes and percent-encoding", () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/a~1b~0c" }, b: { $ref: "#/$defs/with%20space" } },
      $defs: { "a/b~c": { type: "string" }, "with space": { type: "integer" } },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
    });
  });

  it("follows a reference to an $anchor", () => {
    const schema = { type: "array", items: { $ref: "#entry" }, $defs: { entry: { $anchor: "entry", type: "string" } } };
    expect(nested(schema).schema).toEqual({ type: "array", items: { type: "string" } });
  });

  it("follows a full URI reference to the document's own $id", () => {
    const schema = {
      $id: "https://example.com/schemas/step.json",
      type: "object",
      properties: { item: { $ref: "https://example.com/schemas/step.json#/$defs/item" }, next: { $ref: "step.json" } },
      $defs: { item },
    };
    const projected = nested(schema).schema as { properties: { item: unknown; next: unknown } };
    expect(projected.properties.item).toEqual(item);
    expect(projected.properties.next).toMatchObject({ type: "object" });
  });

  it("follows a reference to a schema embedded with its own $id", () => {
    const schema = { type: "object", properties: { item: { $ref: "T0" } }, $defs: { T0: { $id: "T0", ...item } } };
    expect(nested(schema).schema).toEqual({ type: "object", properties: { item } });
  });

  it("resolves a fragment inside an embedded resource against that resource", () => {
    const schema = {
      type: "object",
      properties: { item: { $ref: "inner.json" } },
      $defs: {
        item: { type: "integer" },
        inner: { $id: "inner.json", $ref: "#/$defs/item", $defs: { item: { type: "string" } } },
      },
    };
    expect(nested(schema).schema).toEqual({ type: "object", properties: { item: { type: "string" } } });
  });

  it("merges the keywords beside a $ref with its target, as Ajv applies them", () => {
    const schema = {
      type: "object",
      properties: { item: { $ref: "#/$defs/item", description: "The item.", required: ["extra"] } },
      $defs: { item: { ...item, properties: { ...item.properties, extra: { type: "boolean" } } } },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: {
        item: {
          type: "object",
          description: "The item.",
          properties: { id: { type: "string" }, extra: { type: "boolean" } },
          required: ["extra", "id"],
        },
      },
    });
  });

  it("does not list $ref, $defs or definitions as omitted", () => {
    const schema = {
      properties: { a: { $ref: "#/$defs/a" }, b: { $ref: "#/definitions/b" } },
      $defs: { a: {} },
      definitions: { b: {} },
    };
    expect(nested(schema).omitted).toEqual([]);
  });

  it("lists an unused keyword inside a definition under the definition's pointer", () => {
    const schema = { properties: { id: { $ref: "#/$defs/id" } }, $defs: { id: { type: "string", pattern: "^F" } } };
    expect(nested(schema).omitted).toEqual(["/$defs/id: pattern"]);
  });
});

describe("projectForGemini with recursive references", () => {
  const tree = {
    type: "object",
    properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
    required: ["name"],
  };

  it.each(fields)("terminates on a schema that refers to itself, for %s", (field) => {
    expect(() => nested(tree, field)).not.toThrow();
  });

  it("expands a recursive reference three times, then leaves the node open with its declared type", () => {
    const level = (inner: unknown) => ({
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: inner } },
      required: ["name"],
    });
    expect(nested(tree).schema).toEqual(level(level(level(level({ type: "object" })))));
  });

  it("leaves the recursive node as an OBJECT without properties for responseSchema", () => {
    const text = JSON.stringify(nested(tree, "responseSchema").schema);
    expect(text).toContain('"items":{"type":"OBJECT"}');
  });

  it("lists where the recursion was cut", () => {
    expect(nested(tree).omitted).toEqual(["/properties/children/items: recursive $ref left open after 3 expansions"]);
  });

  it.each(fields)("terminates on mutually recursive definitions, for %s", (field) => {
    const schema = {
      $ref: "#/$defs/a",
      $defs: {
        a: { type: "object", properties: { b: { $ref: "#/$defs/b" }, self: { $ref: "#/$defs/a" } } },
        b: { anyOf: [{ type: "string" }, { type: "array", items: { $ref: "#/$defs/a" } }] },
      },
    };
    const projection = nested(schema, field);
    expect(projection.omitted.filter((entry) => entry.includes("recursive $ref")).length).toBeGreaterThan(0);
  });

  it("refuses a schema whose references expand beyond the size the gateway projects", () => {
    const defs: Record<string, unknown> = { d30: { type: "string" } };
    for (let level = 0; level < 30; level += 1) {
      const next = `#/$defs/d${level + 1}`;
      defs[`d${level}`] = { type: "object", properties: { a: { $ref: next }, b: { $ref: next } } };
    }
    expectInvalidRequest(() => nested({ $ref: "#/$defs/d0", $defs: defs }), "response_schema");
  });
});

describe("projectForGemini refuses references it cannot follow", () => {
  const withRef = (ref: string) => ({ type: "object", properties: { item: { $ref: ref } }, $defs: { item } });

  for (const mode of modes) {
    it.each(fields)(`refuses an https $ref as INVALID_REQUEST without echoing it, in mode ${mode} for %s`, (field) => {
      const ref = "https://schemas.example.com/secret-item.json#/$defs/item";
      expectInvalidRequest(() => projectForGemini(withRef(ref), mode, field), "response_schema", [ref, "secret-item"]);
    });
  }

  it("refuses a $ref to another file", () => {
    expectInvalidRequest(() => nested(withRef("other.json#/$defs/item")), "response_schema", ["other.json"]);
  });

  it("refuses a dangling local $ref without echoing it", () => {
    expectInvalidRequest(() => nested(withRef("#/$defs/missingItem")), "response_schema", ["missingItem"]);
  });

  it("refuses a $ref to an unknown anchor", () => {
    expectInvalidRequest(() => nested(withRef("#nowhere")), "response_schema", ["nowhere"]);
  });

  it("refuses a $ref to a value that is not a schema", () => {
    expectInvalidRequest(
      () => nested({ properties: { a: { $ref: "#/required/0" } }, required: ["a"] }),
      "response_schema",
    );
  });

  it("refuses a dangling $ref even in a definition nothing uses", () => {
    const schema = { type: "string", $defs: { unused: { $ref: "#/$defs/gone" } } };
    expectInvalidRequest(() => nested(schema), "response_schema", ["gone"]);
  });

  it("refuses a value that is not a schema where a schema belongs", () => {
    expectInvalidRequest(() => nested({ type: "object", properties: { a: 5 } }), "response_schema");
    expectInvalidRequest(() => nested("string"), "response_schema");
  });

  it("names the request field the caller gives", () => {
    const schema = withRef("#/$defs/missing");
    expectInvalidRequest(
      () => projectForGemini(schema, "nested", "responseSchema", { param: "generationConfig.responseSchema" }),
      "generationConfig.responseSchema",
    );
  });

  it("passes an external $ref through in mode none", () => {
    const schema = withRef("https://example.com/item.json");
    expect(projectForGemini(schema, "none", "responseJsonSchema").schema).toBe(schema);
  });
});
