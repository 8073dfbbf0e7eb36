import { existsSync, readFileSync } from "node:fs";
import { Ajv, type AnySchema, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { generateSync, type JsonSchema } from "json-schema-faker";
import { describe, expect, it } from "vitest";
import { openApiToJsonSchema } from "../../src/surfaces/gemini/projection/openapi-to-json-schema.js";
import {
  type ProjectionField,
  type ProjectionMode,
  projectForGemini,
  type UnionsProjection,
} from "../../src/surfaces/gemini/projection/projection.js";
import { closedObjects } from "../support/closed-objects.js";

/** Tool alternatives told apart by `action`, as an agent's next step is. */
const toolDefs = {
  query: {
    type: "object",
    additionalProperties: false,
    required: ["action", "arguments"],
    properties: {
      action: { const: "tool/project.query" },
      arguments: {
        type: "object",
        additionalProperties: false,
        required: ["kind", "text"],
        properties: {
          kind: { enum: ["files", "symbols"] },
          text: { type: "string", minLength: 1, maxLength: 80 },
          limit: { type: "integer", minimum: 1, maximum: 50 },
        },
      },
    },
  },
  read: {
    type: "object",
    additionalProperties: false,
    required: ["action", "arguments"],
    properties: {
      action: { const: "tool/file.read" },
      arguments: {
        type: "object",
        additionalProperties: false,
        required: ["kind", "path"],
        properties: {
          kind: { const: "file" },
          path: { type: "string", pattern: "^src/[a-z]{1,8}\\.ts$" },
          lines: { type: "array", maxItems: 2, items: { type: "integer", minimum: 1 } },
        },
      },
    },
  },
  finish: {
    type: "object",
    additionalProperties: false,
    required: ["action", "arguments"],
    properties: {
      action: { const: "finish" },
      arguments: {
        type: "object",
        additionalProperties: false,
        required: ["kind", "answer"],
        properties: {
          kind: { const: "final" },
          answer: { type: "string", maxLength: 200 },
          confidence: { type: "number", minimum: 0, maximum: 1 },
        },
      },
      reason: { type: ["string", "null"] },
    },
  },
};

const nextStep = {
  oneOf: [{ $ref: "#/$defs/query" }, { $ref: "#/$defs/read" }, { $ref: "#/$defs/finish" }],
  discriminator: { propertyName: "action" },
};

const toolActions = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  required: ["thought", "next"],
  properties: { thought: { type: "string", maxLength: 200 }, next: nextStep },
  $defs: toolDefs,
};

const draft07Order: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: "https://example.com/schemas/order.json",
  title: "Order",
  "x-generator": "acme-codegen",
  definitions: {
    money: {
      type: "object",
      additionalProperties: false,
      required: ["amount", "currency"],
      properties: { amount: { type: "number", minimum: 0 }, currency: { type: "string", enum: ["EUR", "USD"] } },
    },
    base: {
      type: "object",
      required: ["id"],
      properties: {
        id: { type: "string", pattern: "^O-[0-9]{4}$" },
        created: { type: "string", format: "date-time" },
      },
    },
  },
  allOf: [
    { $ref: "#/definitions/base" },
    {
      type: "object",
      required: ["total", "lines"],
      properties: {
        total: { $ref: "#/definitions/money" },
        lines: {
          type: "array",
          minItems: 1,
          maxItems: 4,
          items: {
            allOf: [
              { type: "object", required: ["sku"], properties: { sku: { type: "string", "x-sku-style": "acme" } } },
              { required: ["qty"], properties: { qty: { type: "integer", minimum: 1, maximum: 9 } } },
            ],
          },
        },
        contact: { type: "string", format: "email" },
        note: { type: "string", format: "x-acme-note", maxLength: 40 },
      },
    },
  ],
};

const nullableFields = {
  type: "object",
  required: ["a", "b", "c", "d"],
  properties: {
    a: { type: ["string", "null"], maxLength: 5 },
    b: { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }] },
    c: { oneOf: [{ type: "string", enum: ["x", "y"] }, { type: "null" }] },
    d: {
      type: ["object", "null"],
      required: ["e"],
      properties: { e: { type: ["array", "null"], items: { type: "boolean" } } },
    },
    f: { type: "number", nullable: true },
    g: { enum: ["on", "off", null] },
  },
};

/** Shaped like the v22 bootstrap contract: nested arrays of objects with patterns and bounds. */
const bootstrapLike = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  required: ["assessment", "update", "next"],
  properties: {
    assessment: {
      type: "object",
      additionalProperties: false,
      required: ["status", "confidence"],
      properties: {
        status: { enum: ["open", "supported", "refuted"] },
        confidence: { type: "number", minimum: 0, maximum: 1 },
        notes: { type: "array", maxItems: 3, items: { type: "string", maxLength: 60 } },
      },
    },
    update: {
      type: "object",
      additionalProperties: false,
      required: ["working_brief", "retired"],
      properties: {
        working_brief: {
          type: "object",
          additionalProperties: false,
          required: ["summary", "findings"],
          properties: {
            summary: { type: "string", minLength: 1, maxLength: 200 },
            findings: { type: "array", maxItems: 4, items: { $ref: "#/$defs/finding" } },
          },
        },
        retired: {
          type: "array",
          maxItems: 3,
          items: {
            type: "object",
            additionalProperties: false,
            required: ["id", "reason"],
            properties: { id: { type: "string", pattern: "^F[0-9]{1,3}$" }, reason: { type: "string", maxLength: 80 } },
          },
        },
        next_step: {
          type: ["object", "null"],
          required: ["question"],
          properties: { question: { type: "string" }, priority: { type: "integer", minimum: 1, maximum: 3 } },
        },
      },
    },
    next: nextStep,
  },
  $defs: {
    ...toolDefs,
    finding: {
      type: "object",
      additionalProperties: false,
      required: ["id", "direction", "text", "scope", "evidence_refs"],
      properties: {
        id: { type: "string", pattern: "^F[0-9]{1,3}$" },
        direction: { enum: ["supports", "contradicts", "neutral"] },
        text: { type: "string", minLength: 1, maxLength: 300 },
        scope: { type: "string", maxLength: 100 },
        evidence_refs: {
          type: "array",
          minItems: 1,
          maxItems: 4,
          uniqueItems: true,
          items: { type: "string", pattern: "^E[0-9]{6}$" },
        },
      },
    },
  },
};

const recursiveOutline = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $ref: "#/$defs/section",
  $defs: {
    section: {
      type: "object",
      required: ["heading"],
      properties: {
        heading: { type: "string", maxLength: 40 },
        sections: { type: "array", maxItems: 2, items: { $ref: "#/$defs/section" } },
      },
    },
  },
};

const realistic: Record<string, JsonSchema> = {
  "a discriminated union of tool actions with $defs": toolActions,
  "a draft-07 schema with definitions and allOf": draft07Order,
  "a schema of nullable fields": nullableFields,
  "nested arrays of objects with patterns and bounds": bootstrapLike,
  "a recursive outline": recursiveOutline,
};

const bootstrapV22 = new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url);
if (existsSync(bootstrapV22)) {
  realistic["schemas/investigation_bootstrap_v22.json"] = JSON.parse(readFileSync(bootstrapV22, "utf8"));
}

const seeds = Array.from({ length: 50 }, (_, index) => index + 1);

/** A validator for the full schema, of the draft the schema declares. */
function fullValidator(schema: JsonSchema): ValidateFunction {
  const draft07 = typeof schema === "object" && String(schema.$schema).includes("draft-07");
  const ajv = draft07 ? new Ajv({ strict: false, logger: false }) : new Ajv2020({ strict: false, logger: false });
  addFormats.default(ajv);
  return ajv.compile(schema as AnySchema);
}

function projectionValidator(schema: unknown): ValidateFunction {
  const ajv = new Ajv2020({ strict: false, logger: false });
  addFormats.default(ajv);
  return ajv.compile(schema as AnySchema);
}

const instancesBySchema = new Map<string, unknown[]>();

/** The faked instances (seeds 1..50) that the full schema accepts. */
function validInstances(name: string, schema: JsonSchema): unknown[] {
  const known = instancesBySchema.get(name);
  if (known) return known;
  const validate = fullValidator(schema);
  const valid = seeds
    .map((seed) => generateSync(schema, { seed, refDepthMax: 3 }))
    .filter((instance) => validate(instance));
  instancesBySchema.set(name, valid);
  return valid;
}

const projections: ReadonlyArray<[ProjectionMode, ProjectionField, UnionsProjection]> = [
  ["nested", "responseJsonSchema", "any_of"],
  ["nested", "responseJsonSchema", "common_shape"],
  ["outer", "responseJsonSchema", "any_of"],
  ["nested", "responseSchema", "any_of"],
  ["outer", "responseSchema", "any_of"],
];

/** The projection as JSON Schema: a responseSchema goes back through openApiToJsonSchema. */
function projectionAsJsonSchema(
  schema: JsonSchema,
  mode: ProjectionMode,
  field: ProjectionField,
  unions: UnionsProjection,
): unknown {
  const projected = projectForGemini(schema, mode, field, { unions }).schema;
  return field === "responseSchema" ? openApiToJsonSchema(projected) : projected;
}

describe.each(Object.entries(realistic))("the projections of %s", (name, schema) => {
  it("have most of 50 faked instances valid against the full schema to check against", () => {
    expect(validInstances(name, schema).length).toBeGreaterThanOrEqual(40);
  });

  it.each(projections)(
    "accept every instance the full schema accepts, in mode %s for %s (unions %s)",
    (mode, field, unions) => {
      const validate = projectionValidator(projectionAsJsonSchema(schema, mode, field, unions));
      const rejected = validInstances(name, schema).filter((instance) => !validate(instance));
      expect(rejected).toEqual([]);
    },
  );

  it.each(projections)(
    "let Gemini emit every property of those instances, in mode %s for %s (unions %s)",
    (mode, field, unions) => {
      const validate = projectionValidator(closedObjects(projectionAsJsonSchema(schema, mode, field, unions)));
      const rejected = validInstances(name, schema).filter((instance) => !validate(instance));
      expect(rejected).toEqual([]);
    },
  );
});

describe("the nested projection of realistic schemas", () => {
  type Node = {
    type?: unknown;
    properties?: Record<string, Node>;
    items?: Node;
    required?: string[];
    enum?: unknown[];
  };

  function at(node: Node, ...path: string[]): Node {
    let current = node;
    for (const segment of path) {
      const next = segment === "items" ? current.items : current.properties?.[segment];
      if (next === undefined) throw new Error(`no ${segment} in the projection`);
      current = next;
    }
    return current;
  }

  it("keeps the nested object structure of each tool alternative, with merged enums, as their common shape", () => {
    const projected = projectForGemini(toolActions, "nested", "responseJsonSchema", { unions: "common_shape" })
      .schema as Node;
    expect(at(projected, "next", "arguments", "kind")).toEqual({
      type: "string",
      enum: ["files", "symbols", "file", "final"],
    });
    expect(Object.keys(at(projected, "next", "arguments").properties ?? {})).toEqual([
      "kind",
      "text",
      "limit",
      "path",
      "lines",
      "answer",
      "confidence",
    ]);
    expect(at(projected, "next", "arguments", "lines")).toEqual({ type: "array", items: { type: "integer" } });
    expect(at(projected, "next").required).toEqual(["action", "arguments"]);
    expect(at(projected, "next", "arguments").required).toEqual(["kind"]);
  });

  it("keeps each tool alternative with its own arguments as anyOf by default", () => {
    const projected = projectForGemini(toolActions, "nested", "responseJsonSchema").schema as Node & {
      properties: { next: { anyOf: Node[] } };
    };
    const alternatives = projected.properties.next.anyOf;
    expect(alternatives.map((alternative) => at(alternative, "action"))).toEqual([
      { type: "string", enum: ["tool/project.query"] },
      { type: "string", enum: ["tool/file.read"] },
      { type: "string", enum: ["finish"] },
    ]);
    expect(alternatives.map((alternative) => at(alternative, "arguments").required)).toEqual([
      ["kind", "text"],
      ["kind", "path"],
      ["kind", "answer"],
    ]);
  });

  it.each([
    ["responseJsonSchema", "object", "array", "string"],
    ["responseSchema", "OBJECT", "ARRAY", "STRING"],
  ] as const)(
    "keeps update.working_brief.findings.items an object with its required fields for %s",
    (field, object, array, string) => {
      const projected = projectForGemini(bootstrapLike, "nested", field).schema as Node;
      const finding = at(projected, "update", "working_brief", "findings", "items");
      expect(finding.type).toBe(object);
      expect(Object.keys(finding.properties ?? {})).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
      expect(finding.required).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
      expect(at(finding, "evidence_refs")).toEqual({ type: array, items: { type: string } });
      expect(at(projected, "update", "retired", "items").required).toEqual(["id", "reason"]);
    },
  );
});
