import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type ProjectionField,
  type ProjectionMode,
  projectForGemini,
} from "../../src/surfaces/gemini/projection/projection.js";

/**
 * What Gemini receives for the shipped investigation contracts: v22 with the nested projection
 * (for `responseJsonSchema` and for `responseSchema`) and v21 with the outer one, as inline
 * snapshots, with the lists of what each leaves out to local validation. Alternatives are reduced
 * to their common shape, as investigation.bounded sets (`unions = "common_shape"`).
 */

function loadSchema(version: "v21" | "v22"): Record<string, unknown> {
  const url = new URL(`../../schemas/investigation_bootstrap_${version}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8"));
}

const v21 = loadSchema("v21");
const v22 = loadSchema("v22");

/** A projected node, as far as these tests read it. */
interface Node {
  type?: unknown;
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
  required?: string[];
  enum?: unknown[];
  [keyword: string]: unknown;
}

function at(node: Node, ...path: string[]): Node {
  let current = node;
  for (const segment of path) {
    const next = segment === "items" ? current.items : current.properties?.[segment];
    if (next === undefined) throw new Error(`no ${segment} in the projection`);
    current = next;
  }
  return current;
}

/** Every keyword used by any schema node of a projection (property names are not keywords). */
function keywordsOf(node: Node, found = new Set<string>()): Set<string> {
  for (const keyword of Object.keys(node)) found.add(keyword);
  for (const child of Object.values(node.properties ?? {})) keywordsOf(child, found);
  if (node.items !== undefined) keywordsOf(node.items, found);
  for (const branch of node.anyOf ?? []) keywordsOf(branch, found);
  return found;
}

/** What Gemini cannot enforce natively and must stay with local validation. */
const localOnly = [
  "pattern",
  "format",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "additionalProperties",
  "oneOf",
  "const",
  "discriminator",
  "$ref",
  "$defs",
  "$schema",
  "$id",
  "title",
  "examples",
];

const actions = ["tool/project.query", "recall", "checkpoint", "finish"];

/** As investigation.bounded and investigation.bounded.v1 project: alternatives as their common shape. */
function projected(schema: unknown, mode: ProjectionMode, field: ProjectionField) {
  const projection = projectForGemini(schema, mode, field, { unions: "common_shape" });
  return { schema: projection.schema as Node, omitted: projection.omitted };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

function objectsIn(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === "object" && value !== null) {
    found.add(value);
    for (const member of Object.values(value)) objectsIn(member, found);
  }
  return found;
}

describe("investigation_bootstrap_v22, nested projection for responseJsonSchema", () => {
  const { schema, omitted } = projected(v22, "nested", "responseJsonSchema");

  it("is this schema", () => {
    expect(schema).toMatchInlineSnapshot(`
      {
        "description": "Bootstrap answer of the investigation controller (nested contract v22).",
        "properties": {
          "assessment": {
            "properties": {
              "confidence": {
                "enum": [
                  "low",
                  "medium",
                  "high",
                ],
                "type": "string",
              },
              "entity_refs": {
                "items": {
                  "description": "A canonical N-reference, never a raw id.",
                  "type": "string",
                },
                "type": "array",
              },
              "hypothesis_status": {
                "enum": [
                  "open",
                  "supported",
                  "refuted",
                  "inconclusive",
                ],
                "type": "string",
              },
              "summary": {
                "type": "string",
              },
            },
            "required": [
              "summary",
              "confidence",
              "hypothesis_status",
            ],
            "type": "object",
          },
          "next": {
            "description": "Exactly one next action.",
            "properties": {
              "action": {
                "enum": [
                  "tool/project.query",
                  "recall",
                  "checkpoint",
                  "finish",
                ],
                "type": "string",
              },
              "arguments": {
                "properties": {
                  "confidence": {
                    "enum": [
                      "low",
                      "medium",
                      "high",
                    ],
                    "type": "string",
                  },
                  "diagnosis": {
                    "type": "string",
                  },
                  "entity_refs": {
                    "items": {
                      "description": "A canonical N-reference, never a raw id.",
                      "type": "string",
                    },
                    "type": "array",
                  },
                  "evidence_refs": {
                    "items": {
                      "type": "string",
                    },
                    "type": "array",
                  },
                  "kind": {
                    "enum": [
                      "sql",
                      "log_search",
                      "metrics",
                      "trace",
                      "recall",
                    ],
                    "type": "string",
                  },
                  "limit": {
                    "type": "integer",
                  },
                  "offset": {
                    "type": "integer",
                  },
                  "page": {
                    "type": "integer",
                  },
                  "profile": {
                    "description": "A tool profile named in the window.",
                    "type": "string",
                  },
                  "query": {
                    "type": "string",
                  },
                  "reason": {
                    "type": "string",
                  },
                },
                "type": "object",
              },
              "rationale": {
                "type": "string",
              },
            },
            "required": [
              "action",
              "arguments",
              "rationale",
            ],
            "type": "object",
          },
          "update": {
            "properties": {
              "next_step": {
                "properties": {
                  "expected_signal": {
                    "type": "string",
                  },
                  "intent": {
                    "type": "string",
                  },
                },
                "required": [
                  "intent",
                  "expected_signal",
                ],
                "type": "object",
              },
              "retired": {
                "description": "Earlier findings that no longer hold.",
                "items": {
                  "type": "string",
                },
                "type": "array",
              },
              "working_brief": {
                "properties": {
                  "findings": {
                    "items": {
                      "properties": {
                        "direction": {
                          "enum": [
                            "supports",
                            "contradicts",
                            "neutral",
                          ],
                          "type": "string",
                        },
                        "evidence_refs": {
                          "items": {
                            "type": "string",
                          },
                          "type": "array",
                        },
                        "id": {
                          "type": "string",
                        },
                        "scope": {
                          "type": "string",
                        },
                        "text": {
                          "type": "string",
                        },
                      },
                      "required": [
                        "id",
                        "direction",
                        "text",
                        "scope",
                        "evidence_refs",
                      ],
                      "type": "object",
                    },
                    "type": "array",
                  },
                  "open_questions": {
                    "items": {
                      "type": "string",
                    },
                    "type": "array",
                  },
                },
                "required": [
                  "findings",
                ],
                "type": "object",
              },
            },
            "required": [
              "working_brief",
              "retired",
              "next_step",
            ],
            "type": "object",
          },
        },
        "required": [
          "assessment",
          "update",
          "next",
        ],
        "type": "object",
      }
    `);
  });

  it("lists what it leaves out", () => {
    expect(omitted).toMatchInlineSnapshot(`
      [
        "/: $schema",
        "/: $id",
        "/: title",
        "/: additionalProperties",
        "/properties/assessment: additionalProperties",
        "/properties/assessment/properties/summary: maxLength",
        "/properties/assessment/properties/entity_refs: maxItems",
        "/$defs/entity_ref: pattern",
        "/$defs/entity_ref: examples",
        "/properties/update: additionalProperties",
        "/properties/update/properties/working_brief: additionalProperties",
        "/properties/update/properties/working_brief/properties/findings: maxItems",
        "/$defs/finding: additionalProperties",
        "/$defs/finding_id: pattern",
        "/$defs/finding_id: examples",
        "/$defs/finding/properties/text: minLength",
        "/$defs/finding/properties/text: maxLength",
        "/$defs/finding/properties/scope: maxLength",
        "/$defs/finding/properties/evidence_refs: minItems",
        "/$defs/finding/properties/evidence_refs: maxItems",
        "/$defs/finding/properties/evidence_refs: uniqueItems",
        "/$defs/evidence_id: pattern",
        "/$defs/evidence_id: examples",
        "/properties/update/properties/working_brief/properties/open_questions: maxItems",
        "/properties/update/properties/working_brief/properties/open_questions/items: maxLength",
        "/properties/update/properties/next_step: additionalProperties",
        "/properties/update/properties/next_step/properties/intent: maxLength",
        "/properties/update/properties/next_step/properties/expected_signal: maxLength",
        "/properties/next: discriminator",
        "/properties/next/oneOf/0: additionalProperties",
        "/properties/next/oneOf/0/properties/arguments: additionalProperties",
        "/properties/next/oneOf/0/properties/arguments/properties/query: maxLength",
        "/properties/next/oneOf/0/properties/arguments/properties/offset: minimum",
        "/properties/next/oneOf/0/properties/arguments/properties/limit: minimum",
        "/properties/next/oneOf/0/properties/arguments/properties/limit: maximum",
        "/$defs/rationale: maxLength",
        "/properties/next/oneOf/1: additionalProperties",
        "/properties/next/oneOf/1/properties/arguments: additionalProperties",
        "/properties/next/oneOf/1/properties/arguments/properties/evidence_refs: minItems",
        "/properties/next/oneOf/1/properties/arguments/properties/evidence_refs: maxItems",
        "/properties/next/oneOf/1/properties/arguments/properties/page: minimum",
        "/properties/next/oneOf/2: additionalProperties",
        "/properties/next/oneOf/2/properties/arguments: additionalProperties",
        "/properties/next/oneOf/2/properties/arguments/properties/reason: maxLength",
        "/properties/next/oneOf/3: additionalProperties",
        "/properties/next/oneOf/3/properties/arguments: additionalProperties",
        "/properties/next/oneOf/3/properties/arguments/properties/diagnosis: maxLength",
        "/properties/next: oneOf reduced to common shape",
      ]
    `);
  });

  it("keeps no ID pattern, value range, array bound or union", () => {
    const kept = keywordsOf(schema);
    expect(localOnly.filter((keyword) => kept.has(keyword))).toEqual([]);
  });

  it("keeps findings items objects with their five required fields", () => {
    const finding = at(schema, "update", "working_brief", "findings", "items");
    expect(finding.type).toBe("object");
    expect(finding.required).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
    expect(at(finding, "evidence_refs")).toEqual({ type: "array", items: { type: "string" } });
  });

  it("keeps the declared property order, which the snapshot above shows sorted", () => {
    expect(Object.keys(schema.properties ?? {})).toEqual(["assessment", "update", "next"]);
    const finding = at(schema, "update", "working_brief", "findings", "items");
    expect(Object.keys(finding.properties ?? {})).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
  });

  it("reduces next to a common shape whose action enum lists every action", () => {
    const next = at(schema, "next");
    expect(next.type).toBe("object");
    expect(at(next, "action")).toEqual({ type: "string", enum: actions });
    expect(next.required).toEqual(["action", "arguments", "rationale"]);
    expect(at(next, "arguments").type).toBe("object");
  });
});

describe("investigation_bootstrap_v21, outer projection for responseJsonSchema", () => {
  const { schema, omitted } = projected(v21, "outer", "responseJsonSchema");

  it("is this schema", () => {
    expect(schema).toMatchInlineSnapshot(`
      {
        "description": "Bootstrap answer of the investigation controller (contract v21, kept for frozen policies).",
        "properties": {
          "assessment": {
            "type": "object",
          },
          "next": {
            "description": "Exactly one next action.",
            "type": "object",
          },
          "update": {
            "type": "object",
          },
        },
        "required": [
          "assessment",
          "update",
          "next",
        ],
        "type": "object",
      }
    `);
  });

  it("lists what it leaves out", () => {
    expect(omitted).toMatchInlineSnapshot(`
      [
        "/: $schema",
        "/: $id",
        "/: title",
        "/: additionalProperties",
        "/properties/assessment: additionalProperties",
        "/properties/update: additionalProperties",
        "/properties/next: discriminator",
        "/properties/next/oneOf/0: additionalProperties",
        "/properties/next/oneOf/1: additionalProperties",
        "/properties/next/oneOf/2: additionalProperties",
        "/properties/next/oneOf/3: additionalProperties",
        "/properties/next: oneOf reduced to common shape",
        "/properties/assessment: nested structure",
        "/properties/update: nested structure",
        "/properties/next: nested structure",
      ]
    `);
  });

  it("keeps the top level and only the type of each property", () => {
    expect(schema.required).toEqual(["assessment", "update", "next"]);
    for (const name of ["assessment", "update", "next"])
      expect(at(schema, name)).toEqual(expect.objectContaining({ type: "object" }));
    expect(localOnly.filter((keyword) => keywordsOf(schema).has(keyword))).toEqual([]);
  });
});

describe("investigation_bootstrap_v22, nested projection for responseSchema", () => {
  const { schema, omitted } = projected(v22, "nested", "responseSchema");

  it("is this schema", () => {
    expect(schema).toMatchInlineSnapshot(`
      {
        "description": "Bootstrap answer of the investigation controller (nested contract v22).",
        "properties": {
          "assessment": {
            "properties": {
              "confidence": {
                "enum": [
                  "low",
                  "medium",
                  "high",
                ],
                "type": "STRING",
              },
              "entity_refs": {
                "items": {
                  "description": "A canonical N-reference, never a raw id.",
                  "type": "STRING",
                },
                "type": "ARRAY",
              },
              "hypothesis_status": {
                "enum": [
                  "open",
                  "supported",
                  "refuted",
                  "inconclusive",
                ],
                "type": "STRING",
              },
              "summary": {
                "type": "STRING",
              },
            },
            "required": [
              "summary",
              "confidence",
              "hypothesis_status",
            ],
            "type": "OBJECT",
          },
          "next": {
            "description": "Exactly one next action.",
            "properties": {
              "action": {
                "enum": [
                  "tool/project.query",
                  "recall",
                  "checkpoint",
                  "finish",
                ],
                "type": "STRING",
              },
              "arguments": {
                "properties": {
                  "confidence": {
                    "enum": [
                      "low",
                      "medium",
                      "high",
                    ],
                    "type": "STRING",
                  },
                  "diagnosis": {
                    "type": "STRING",
                  },
                  "entity_refs": {
                    "items": {
                      "description": "A canonical N-reference, never a raw id.",
                      "type": "STRING",
                    },
                    "type": "ARRAY",
                  },
                  "evidence_refs": {
                    "items": {
                      "type": "STRING",
                    },
                    "type": "ARRAY",
                  },
                  "kind": {
                    "enum": [
                      "sql",
                      "log_search",
                      "metrics",
                      "trace",
                      "recall",
                    ],
                    "type": "STRING",
                  },
                  "limit": {
                    "type": "INTEGER",
                  },
                  "offset": {
                    "type": "INTEGER",
                  },
                  "page": {
                    "type": "INTEGER",
                  },
                  "profile": {
                    "description": "A tool profile named in the window.",
                    "type": "STRING",
                  },
                  "query": {
                    "type": "STRING",
                  },
                  "reason": {
                    "type": "STRING",
                  },
                },
                "type": "OBJECT",
              },
              "rationale": {
                "type": "STRING",
              },
            },
            "required": [
              "action",
              "arguments",
              "rationale",
            ],
            "type": "OBJECT",
          },
          "update": {
            "properties": {
              "next_step": {
                "properties": {
                  "expected_signal": {
                    "type": "STRING",
                  },
                  "intent": {
                    "type": "STRING",
                  },
                },
                "required": [
                  "intent",
                  "expected_signal",
                ],
                "type": "OBJECT",
              },
              "retired": {
                "description": "Earlier findings that no longer hold.",
                "items": {
                  "type": "STRING",
                },
                "type": "ARRAY",
              },
              "working_brief": {
                "properties": {
                  "findings": {
                    "items": {
                      "properties": {
                        "direction": {
                          "enum": [
                            "supports",
                            "contradicts",
                            "neutral",
                          ],
                          "type": "STRING",
                        },
                        "evidence_refs": {
                          "items": {
                            "type": "STRING",
                          },
                          "type": "ARRAY",
                        },
                        "id": {
                          "type": "STRING",
                        },
                        "scope": {
                          "type": "STRING",
                        },
                        "text": {
                          "type": "STRING",
                        },
                      },
                      "required": [
                        "id",
                        "direction",
                        "text",
                        "scope",
                        "evidence_refs",
                      ],
                      "type": "OBJECT",
                    },
                    "type": "ARRAY",
                  },
                  "open_questions": {
                    "items": {
                      "type": "STRING",
                    },
                    "type": "ARRAY",
                  },
                },
                "required": [
                  "findings",
                ],
                "type": "OBJECT",
              },
            },
            "required": [
              "working_brief",
              "retired",
              "next_step",
            ],
            "type": "OBJECT",
          },
        },
        "required": [
          "assessment",
          "update",
          "next",
        ],
        "type": "OBJECT",
      }
    `);
  });

  it("lists what it leaves out", () => {
    expect(omitted).toMatchInlineSnapshot(`
      [
        "/: $schema",
        "/: $id",
        "/: title",
        "/: additionalProperties",
        "/properties/assessment: additionalProperties",
        "/properties/assessment/properties/summary: maxLength",
        "/properties/assessment/properties/entity_refs: maxItems",
        "/$defs/entity_ref: pattern",
        "/$defs/entity_ref: examples",
        "/properties/update: additionalProperties",
        "/properties/update/properties/working_brief: additionalProperties",
        "/properties/update/properties/working_brief/properties/findings: maxItems",
        "/$defs/finding: additionalProperties",
        "/$defs/finding_id: pattern",
        "/$defs/finding_id: examples",
        "/$defs/finding/properties/text: minLength",
        "/$defs/finding/properties/text: maxLength",
        "/$defs/finding/properties/scope: maxLength",
        "/$defs/finding/properties/evidence_refs: minItems",
        "/$defs/finding/properties/evidence_refs: maxItems",
        "/$defs/finding/properties/evidence_refs: uniqueItems",
        "/$defs/evidence_id: pattern",
        "/$defs/evidence_id: examples",
        "/properties/update/properties/working_brief/properties/open_questions: maxItems",
        "/properties/update/properties/working_brief/properties/open_questions/items: maxLength",
        "/properties/update/properties/next_step: additionalProperties",
        "/properties/update/properties/next_step/properties/intent: maxLength",
        "/properties/update/properties/next_step/properties/expected_signal: maxLength",
        "/properties/next: discriminator",
        "/properties/next/oneOf/0: additionalProperties",
        "/properties/next/oneOf/0/properties/arguments: additionalProperties",
        "/properties/next/oneOf/0/properties/arguments/properties/query: maxLength",
        "/properties/next/oneOf/0/properties/arguments/properties/offset: minimum",
        "/properties/next/oneOf/0/properties/arguments/properties/limit: minimum",
        "/properties/next/oneOf/0/properties/arguments/properties/limit: maximum",
        "/$defs/rationale: maxLength",
        "/properties/next/oneOf/1: additionalProperties",
        "/properties/next/oneOf/1/properties/arguments: additionalProperties",
        "/properties/next/oneOf/1/properties/arguments/properties/evidence_refs: minItems",
        "/properties/next/oneOf/1/properties/arguments/properties/evidence_refs: maxItems",
        "/properties/next/oneOf/1/properties/arguments/properties/page: minimum",
        "/properties/next/oneOf/2: additionalProperties",
        "/properties/next/oneOf/2/properties/arguments: additionalProperties",
        "/properties/next/oneOf/2/properties/arguments/properties/reason: maxLength",
        "/properties/next/oneOf/3: additionalProperties",
        "/properties/next/oneOf/3/properties/arguments: additionalProperties",
        "/properties/next/oneOf/3/properties/arguments/properties/diagnosis: maxLength",
        "/properties/next: oneOf reduced to common shape",
      ]
    `);
  });

  it("writes uppercase types only, with findings items OBJECTs and the action enum", () => {
    const types = new Set<unknown>();
    const collect = (node: Node): void => {
      types.add(node.type);
      for (const child of Object.values(node.properties ?? {})) collect(child);
      if (node.items !== undefined) collect(node.items);
    };
    collect(schema);
    expect([...types].every((type) => typeof type === "string" && type === type.toUpperCase())).toBe(true);
    const finding = at(schema, "update", "working_brief", "findings", "items");
    expect(finding.type).toBe("OBJECT");
    expect(finding.required).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
    expect(at(schema, "next", "action")).toEqual({ type: "STRING", enum: actions });
    expect(localOnly.filter((keyword) => keywordsOf(schema).has(keyword))).toEqual([]);
  });
});

describe("investigation_bootstrap_v22 under a policy that keeps alternatives (unions any_of)", () => {
  const { schema, omitted } = projectForGemini(v22, "nested", "responseJsonSchema", { unions: "any_of" });
  const common = projected(v22, "nested", "responseJsonSchema").schema;

  it("keeps one alternative per action, each with its own arguments", () => {
    const next = (schema as Node).properties?.next as Node;
    expect(next.anyOf?.map((alternative) => at(alternative, "action"))).toEqual(
      actions.map((action) => ({ type: "string", enum: [action] })),
    );
    expect(next.anyOf?.map((alternative) => at(alternative, "arguments").required)).toEqual([
      ["kind", "query"],
      ["kind", "evidence_refs", "page"],
      ["reason"],
      ["diagnosis", "confidence"],
    ]);
    expect(omitted).toContain(
      "/properties/next: oneOf kept as anyOf (that only one alternative matches is checked locally)",
    );
  });

  it("differs from the common shape only under next, and is larger than it but smaller than the full schema", () => {
    const { next: _kept, ...rest } = (schema as Node).properties ?? {};
    const { next: _common, ...commonRest } = (common as Node).properties ?? {};
    expect(rest).toEqual(commonRest);
    const size = (value: unknown) => JSON.stringify(value).length;
    expect(size(schema)).toBeGreaterThan(size(common));
    expect(size(schema)).toBeLessThan(size(v22));
  });
});

describe("the investigation projections leave their input unchanged", () => {
  const cases: ReadonlyArray<[string, Record<string, unknown>, ProjectionMode, ProjectionField]> = [
    ["v22", v22, "nested", "responseJsonSchema"],
    ["v22", v22, "nested", "responseSchema"],
    ["v21", v21, "outer", "responseJsonSchema"],
    ["v21", v21, "outer", "responseSchema"],
  ];

  it.each(cases)("%s in mode %s for %s, deep-frozen", (_version, schema, mode, field) => {
    // A `$comment` of its own makes the canonical JSON new, so the projection cache cannot answer
    // and the frozen object itself is walked.
    const input = { ...structuredClone(schema), $comment: `frozen ${mode} ${field}` };
    const expected = structuredClone(input);
    deepFreeze(input);
    const projection = projectForGemini(input, mode, field);
    expect(input).toEqual(expected);
    expect(projection.omitted).toContain("/: $comment");
    expect(projection.schema).toEqual(projectForGemini(schema, mode, field).schema);
    const inputObjects = objectsIn(input);
    expect([...objectsIn(projection.schema)].filter((object) => inputObjects.has(object))).toEqual([]);
  });
});
