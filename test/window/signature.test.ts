import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { embeddedJsonObjects } from "../../src/json/embedded-json.js";
import { formExample, formExampleLabel, signature } from "../../src/window/index.js";
import { realWorldSchemas } from "../schema/fixtures/real-world-schemas.js";

// Seed 000's compact signatures, as golden texts: the investigation schemas (v21, v22), the real-world schemas of
// the schema fixtures, and a few shapes those do not show.

const schemaOf = (name: string) => JSON.parse(readFileSync(`schemas/${name}.json`, "utf8")) as Record<string, unknown>;
const points = (text: string) => Array.from(text).length;

const v22 = `assessment: {summary: str≤1200, confidence: "low"|"medium"|"high", hypothesis_status: "open"|"supported"|"refuted"|"inconclusive", entity_refs?: [str]≤20}
update: {working_brief: {findings: [{id: str, direction: "supports"|"contradicts"|"neutral", text: str(1..600), scope: str≤200, evidence_refs: [str]≤8}]≤12, open_questions?: [str≤300]≤6}, retired: [str], next_step: {intent: str≤300, expected_signal: str≤300}}
next: {action: "tool/project.query", arguments: {kind: "sql"|"log_search"|"metrics"|"trace", query: str≤2000, offset?: int≥0, limit?: int(1..500), entity_refs?: [str], profile?: str}, rationale: str≤500} | {action: "recall", arguments: {kind: "recall", evidence_refs: [str](=1), page: int≥0}, rationale: str≤500} | {action: "checkpoint", arguments: {reason: str≤500}, rationale: str≤500} | {action: "finish", arguments: {diagnosis: str≤2000, confidence: "low"|"medium"|"high"}, rationale: str≤500}`;

describe("signature", () => {
  it("renders investigation_bootstrap_v22 in about a fifth of its compact JSON", () => {
    const schema = schemaOf("investigation_bootstrap_v22");
    expect(signature(schema)).toBe(v22);
    const compact = points(JSON.stringify(schema));
    expect(compact).toBe(4309);
    expect(points(v22)).toBe(912);
    expect(points(v22) / compact).toBeLessThan(0.25);
  });

  it("renders investigation_bootstrap_v21, differing from v22 only where the schemas do", () => {
    const rendered = signature(schemaOf("investigation_bootstrap_v21"));
    expect(rendered).toContain("evidence_refs: [str]≤5}]≤10}");
    expect(rendered).not.toContain("open_questions");
    expect(points(rendered)).toBe(882);
  });

  it.each([
    [
      "a recursive tree through $defs",
      {
        $defs: {
          node: {
            type: "object",
            properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
            required: ["label"],
          },
        },
        $ref: "#/$defs/node",
      },
      "{label: str, children?: [<node>]}",
    ],
    [
      "a map, a format, an anyOf and a tuple",
      {
        type: "object",
        properties: {
          tags: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
          at: { type: "string", format: "date-time" },
          id: { anyOf: [{ type: "integer" }, { type: "string", pattern: "^N\\d+$" }] },
          pair: { type: "array", prefixItems: [{ type: "number" }, { type: "boolean" }] },
          "odd name": { const: 3 },
        },
        required: ["tags"],
      },
      'tags: {[key]: int≥0}\nat?: str(date-time)\nid?: int | str\npair?: [num, bool]\n"odd name"?: 3',
    ],
  ])("renders %s", (_name, schema, expected) => {
    expect(signature(schema)).toBe(expected);
  });
});

describe("signature of the real-world schemas (test/schema/fixtures)", () => {
  const named = (name: string) => realWorldSchemas.find((entry) => entry.name === name)?.schema;

  it.each([
    ["openai strict: math reasoning steps", "steps: [{explanation: str, output: str}]\nfinal_answer: str"],
    [
      "openai strict: calendar event extraction",
      "name: str\ndate: str\nparticipants: [str]\nlocation: str|null\nduration_minutes: int|null",
    ],
  ])("renders %s", (name, expected) => {
    expect(signature(named(name))).toBe(expected);
  });

  it("is shorter than the compact JSON of every one of them", () => {
    for (const { name, schema } of realWorldSchemas) {
      expect(points(signature(schema)), name).toBeLessThan(points(JSON.stringify(schema)));
    }
  });
});

describe("formExample", () => {
  it("is a labelled literal JSON object of the schema's form, with placeholder values", () => {
    const text = formExample(schemaOf("investigation_bootstrap_v22"));
    const [label, json] = text.split("\n");
    expect(label).toBe(formExampleLabel);
    const example = JSON.parse(json ?? "") as { next: { action: string; arguments: { kind: string } } };
    expect(example.next).toMatchObject({ action: "tool/project.query", arguments: { kind: "sql", query: "<query>" } });
  });

  it("is not taken for a copy of the schema by the gateway's de-duplication, nor is the signature", () => {
    const schema = schemaOf("investigation_bootstrap_v22");
    const embedded = [...embeddedJsonObjects(`${formExample(schema)}\n${signature(schema)}`, 100)];
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded).not.toContain(canonicalJson(schema));
  });
});
