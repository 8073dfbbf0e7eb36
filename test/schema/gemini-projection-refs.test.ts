import { describe, expect, it } from "vitest";
import {
  type ProjectionField,
  type ProjectionMode,
  projectForGemini,
} from "../../src/surfaces/gemini/projection/projection.js";
import { expectInvalidRequest } from "../surfaces/gateway-error-of.js";
import { realWorldSchemas } from "./fixtures/real-world-schemas.js";

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
    expect(projected.properties.next).toEqual({ $ref: "#" });
    const openApi = nested(schema, "responseSchema").schema as { properties: { next: unknown } };
    expect(openApi.properties.next).toMatchObject({ type: "OBJECT" });
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

  it("keeps a reference to the document root as $ref # for responseJsonSchema, and cuts nothing", () => {
    const projection = nested(tree);
    expect(projection.schema).toEqual({
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["name"],
    });
    expect(projection.omitted).toEqual([]);
  });

  it("expands a recursive reference three times for responseSchema, then leaves the node open with its declared type", () => {
    const level = (inner: unknown) => ({
      type: "OBJECT",
      properties: { name: { type: "STRING" }, children: { type: "ARRAY", items: inner } },
      required: ["name"],
    });
    expect(nested(tree, "responseSchema").schema).toEqual(level(level(level(level({ type: "OBJECT" })))));
  });

  it("lists where the recursion was cut for responseSchema", () => {
    expect(nested(tree, "responseSchema").omitted).toEqual([
      "/properties/children/items: recursive $ref left open after 3 expansions",
    ]);
  });

  it("keeps a recursive definition in $defs, and the root that is only a reference to it is the definition", () => {
    const schema = {
      $ref: "#/$defs/Category",
      $defs: {
        Category: {
          type: "object",
          properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Category" } } },
          required: ["name"],
        },
      },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["name"],
    });
  });

  it("keeps mutually recursive definitions as references for responseJsonSchema", () => {
    const schema = {
      type: "object",
      properties: { root: { $ref: "#/$defs/a" } },
      $defs: {
        a: { type: "object", properties: { b: { $ref: "#/$defs/b" }, self: { $ref: "#/$defs/a" } } },
        b: { anyOf: [{ type: "string" }, { type: "array", items: { $ref: "#/$defs/a" } }] },
      },
    };
    const projection = nested(schema);
    expect(projection.schema).toEqual({
      type: "object",
      properties: { root: { $ref: "#/$defs/a" } },
      $defs: {
        a: { type: "object", properties: { b: { $ref: "#/$defs/b" }, self: { $ref: "#/$defs/a" } } },
        b: { anyOf: [{ type: "string" }, { type: "array", items: { $ref: "#/$defs/a" } }] },
      },
    });
    expect(projection.omitted).toEqual([]);
  });

  it("cuts mutually recursive definitions for responseSchema", () => {
    const schema = {
      $ref: "#/$defs/a",
      $defs: {
        a: { type: "object", properties: { b: { $ref: "#/$defs/b" }, self: { $ref: "#/$defs/a" } } },
        b: { anyOf: [{ type: "string" }, { type: "array", items: { $ref: "#/$defs/a" } }] },
      },
    };
    const projection = nested(schema, "responseSchema");
    expect(projection.omitted.filter((entry) => entry.includes("recursive $ref")).length).toBeGreaterThan(0);
  });

  it("makes a required property on a cycle optional, as Gemini unrolls cycles only through optional ones, and lists it", () => {
    const schema = {
      type: "object",
      properties: { value: { type: "number" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } },
      required: ["value", "next"],
      additionalProperties: false,
    };
    const projection = nested(schema);
    expect(projection.schema).toEqual({
      type: "object",
      properties: { value: { type: "number" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } },
      required: ["value"],
    });
    expect(projection.omitted).toContain(
      "/properties/next: required (on a $ref cycle, which Gemini unrolls only through optional properties)",
    );
  });

  it("makes optional only the property nearest the reference", () => {
    const schema = {
      type: "object",
      properties: {
        node: {
          type: "object",
          properties: { id: { type: "string" }, children: { type: "array", items: { $ref: "#/properties/node" } } },
          required: ["id", "children"],
        },
      },
      required: ["node"],
    };
    const projected = nested(schema).schema as {
      required: string[];
      $defs: { properties_node: { required: string[] } };
    };
    expect(projected.required).toEqual(["node"]);
    expect(projected.$defs.properties_node.required).toEqual(["id"]);
  });

  it("leaves a recursive reference open where keywords beside it must be merged into it, and lists it", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string" }, child: { $ref: "#", properties: { extra: { type: "integer" } } } },
      required: ["name"],
    };
    const projection = nested(schema);
    expect(JSON.stringify(projection.schema)).not.toContain("$ref");
    expect(projection.omitted).toEqual(["/properties/child: recursive $ref left open where keywords beside it apply"]);
  });

  it("leaves a cycle through no property open with the target's type, and lists it", () => {
    const projection = nested({ type: "array", items: { $ref: "#" } });
    expect(projection.schema).toEqual({ type: "array", items: { type: "array" } });
    expect(projection.omitted).toEqual([
      "/: recursive $ref left open (a cycle through no property, which Gemini cannot unroll)",
    ]);
  });

  describe("a schema whose references expand to 2^30 nodes", () => {
    const defs: Record<string, unknown> = { d30: { type: "string" } };
    for (let level = 0; level < 30; level += 1) {
      const next = `#/$defs/d${level + 1}`;
      defs[`d${level}`] = { type: "object", properties: { a: { $ref: next }, b: { $ref: next } } };
    }
    const schema = { $ref: "#/$defs/d0", $defs: defs };

    it("is projected with each definition read and written once for responseJsonSchema", () => {
      const projected = nested(schema).schema as { properties: unknown; $defs: Record<string, unknown> };
      expect(projected.properties).toEqual({ a: { $ref: "#/$defs/d1" }, b: { $ref: "#/$defs/d1" } });
      expect(Object.keys(projected.$defs)).toHaveLength(29);
      expect(JSON.stringify(projected).length).toBeLessThan(JSON.stringify(schema).length);
    });

    it.each(["responseSchema", "outer"] as const)("is refused where it must be written in place (%s)", (where) => {
      const project = () =>
        where === "outer" ? projectForGemini(schema, "outer", "responseJsonSchema") : nested(schema, where);
      expectInvalidRequest(project, "response_schema");
    });
  });
});

describe("projectForGemini keeps references for responseJsonSchema where they keep the schema small", () => {
  const address = {
    type: "object",
    description: "A postal address as printed on the document.",
    properties: { street: { type: "string" }, city: { type: "string" }, country: { type: "string" } },
    required: ["street", "city", "country"],
  };

  it("keeps a definition used several times in $defs and refers to it", () => {
    const schema = {
      type: "object",
      properties: { billing: { $ref: "#/$defs/Address" }, shipping: { $ref: "#/$defs/Address" } },
      $defs: { Address: { ...address, title: "Address" } },
    };
    const projection = nested(schema);
    expect(projection.schema).toEqual({
      type: "object",
      properties: { billing: { $ref: "#/$defs/Address" }, shipping: { $ref: "#/$defs/Address" } },
      $defs: { Address: address },
    });
    expect(projection.omitted).toEqual(["/$defs/Address: title"]);
  });

  it("keeps the size of a schema that uses one large definition twenty times, which in place grows many times over", () => {
    const note = { type: "object", description: "n".repeat(850), properties: { text: { type: "string" } } };
    const schema = {
      type: "object",
      $defs: { note },
      properties: Object.fromEntries(
        Array.from({ length: 20 }, (_, index) => [`note_${index}`, { $ref: "#/$defs/note" }]),
      ),
    };
    const size = (value: unknown) => JSON.stringify(value).length;
    expect(size(nested(schema).schema)).toBeLessThanOrEqual(size(schema));
    expect(size(nested(schema, "responseSchema").schema)).toBeGreaterThan(10 * size(schema));
  });

  it("writes everything in place for responseSchema", () => {
    const schema = {
      type: "object",
      properties: { billing: { $ref: "#/$defs/Address" }, shipping: { $ref: "#/$defs/Address" } },
      $defs: { Address: address },
    };
    const text = JSON.stringify(nested(schema, "responseSchema").schema);
    expect(text).not.toContain("$ref");
    expect(text.match(/postal address/g)).toHaveLength(2);
  });

  it("writes in place a definition smaller than a reference to it", () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/id" }, b: { $ref: "#/$defs/id" }, c: { $ref: "#/$defs/id" } },
      $defs: { id: { type: "string", pattern: "^[A-Z]{3}$" } },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" }, c: { type: "string" } },
    });
  });

  it("writes in place a definition used once, with the definitions it uses kept", () => {
    const schema = {
      type: "object",
      properties: { order: { $ref: "#/$defs/Order" } },
      $defs: {
        Order: { type: "object", properties: { from: { $ref: "#/$defs/Address" }, to: { $ref: "#/$defs/Address" } } },
        Address: address,
      },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: {
        order: { type: "object", properties: { from: { $ref: "#/$defs/Address" }, to: { $ref: "#/$defs/Address" } } },
      },
      $defs: { Address: address },
    });
  });

  it("keeps a nullable reference as anyOf of the reference and null", () => {
    const schema = {
      type: "object",
      properties: { a: { anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }] }, b: { $ref: "#/$defs/Address" } },
      $defs: { Address: address },
    };
    expect(nested(schema).schema).toMatchObject({
      properties: { a: { anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }] }, b: { $ref: "#/$defs/Address" } },
    });
  });

  it("puts a referring node's own description beside the reference in a one-branch anyOf", () => {
    const schema = {
      type: "object",
      properties: {
        billing: { $ref: "#/$defs/Address", description: "Where invoices go." },
        shipping: { $ref: "#/$defs/Address" },
      },
      $defs: { Address: address },
    };
    expect(nested(schema).schema).toMatchObject({
      properties: {
        billing: { description: "Where invoices go.", anyOf: [{ $ref: "#/$defs/Address" }] },
        shipping: { $ref: "#/$defs/Address" },
      },
    });
  });

  it("writes the referring node's description over the definition's when it writes the definition in place", () => {
    const schema = {
      type: "object",
      properties: { billing: { $ref: "#/$defs/Address", description: "Where invoices go." } },
      $defs: { Address: address },
    };
    expect(nested(schema).schema).toEqual({
      type: "object",
      properties: { billing: { ...address, description: "Where invoices go." } },
    });
  });

  it("names definitions from $defs and definitions, each name once", () => {
    const schema = {
      type: "object",
      properties: {
        a: { $ref: "#/$defs/Address" },
        b: { $ref: "#/$defs/Address" },
        c: { $ref: "#/definitions/Address" },
        d: { $ref: "#/definitions/Address" },
      },
      $defs: { Address: address },
      definitions: { Address: { ...address, description: "Another address, in the draft-07 place." } },
    };
    const projected = nested(schema).schema as { properties: Record<string, unknown>; $defs: Record<string, unknown> };
    expect(projected.properties).toEqual({
      a: { $ref: "#/$defs/Address" },
      b: { $ref: "#/$defs/Address" },
      c: { $ref: "#/$defs/Address_2" },
      d: { $ref: "#/$defs/Address_2" },
    });
    expect(Object.keys(projected.$defs)).toEqual(["Address", "Address_2"]);
  });

  it("writes a reference with nothing beside it, and nothing but $ref and $defs that are not Gemini's, over the real-world corpus", () => {
    const offending: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (typeof node !== "object" || node === null) return;
      if (Array.isArray(node)) {
        node.forEach((item, index) => {
          visit(item, `${path}/${index}`);
        });
        return;
      }
      const record = node as Record<string, unknown>;
      if ("$ref" in record && Object.keys(record).length > 1) offending.push(path);
      for (const [key, value] of Object.entries(record)) if (key !== "enum") visit(value, `${path}/${key}`);
    };
    for (const { name, schema } of realWorldSchemas) {
      const projected = nested(schema).schema as Record<string, unknown>;
      const { $defs, ...body } = projected;
      visit(body, name);
      visit($defs, `${name} $defs`);
    }
    expect(offending).toEqual([]);
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
    expect(projectForGemini(schema, "none", "responseJsonSchema").schema).toEqual(
      withRef("https://example.com/item.json"),
    );
  });
});
