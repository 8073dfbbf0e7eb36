import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { simulatedAnswer } from "../../src/simulated/answer.js";
import { fakeDocument } from "../../src/simulated/fake-document.js";
import { createSimulatedProvider, simulatedOrigin } from "../../src/simulated/simulated-provider.js";

const investigation: unknown = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
);

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
const conforms = (schema: unknown, text: string | undefined) =>
  text !== undefined && ajv.validate(schema as object, JSON.parse(text));

const labelled = (text: string) => JSON.parse(text) as { promptgate_simulated?: boolean };

describe("fakeDocument works within a budget", () => {
  it("answers the 30-byte recursive schema of issue 12 with nothing, at once", () => {
    expect(fakeDocument({ allOf: [{ $ref: "#" }] }, 1)).toBeUndefined();
  });

  it("answers a schema whose definitions loop through anyOf and not with nothing", () => {
    const schema = {
      $ref: "#/$defs/a",
      $defs: { a: { anyOf: [{ $ref: "#/$defs/b" }] }, b: { not: { $ref: "#/$defs/a" } } },
    };
    expect(fakeDocument(schema, 1)).toBeUndefined();
  });

  it("gives up on a document that would take a million values", () => {
    const schema = {
      type: "array",
      minItems: 1_000,
      items: { type: "object", required: ["a"], properties: { a: { type: "array", minItems: 1_000, items: {} } } },
    };
    expect(fakeDocument(schema, 1)).toBeUndefined();
  });

  it("gives up on a schema that asks for more values than its budget", () => {
    const row = { type: "array", minItems: 100, maxItems: 100, items: { type: "integer" } };
    expect(fakeDocument({ type: "array", minItems: 100, maxItems: 100, items: row }, 1)).toBeUndefined();
    expect(fakeDocument(row, 1)).toBeDefined();
  });

  it("refuses minimums and patterns larger than a stand-in should make", () => {
    expect(fakeDocument({ type: "string", minLength: 1_000_000_000 }, 1)).toBeUndefined();
    expect(fakeDocument({ type: "array", minItems: 50_000, items: { type: "null" } }, 1)).toBeUndefined();
    expect(fakeDocument({ type: "string", pattern: "^a{100000000}$" }, 1)).toBeUndefined();
    expect(fakeDocument({ properties: { deep: { type: "string", pattern: "^[a-z]{2,50000}$" } } }, 1)).toBeUndefined();
  });

  it("keeps strings and arrays short where the schema allows long ones, and still conforming", () => {
    const schema = {
      type: "object",
      required: ["text", "list"],
      properties: {
        text: { type: "string", minLength: 5, maxLength: 1_000_000_000 },
        list: { type: "array", minItems: 2, maxItems: 1_000_000_000, items: { type: "integer" } },
      },
    };
    const document = fakeDocument(schema, 7);
    expect(conforms(schema, document)).toBe(true);
    expect(document?.length).toBeLessThan(2_000);
  });

  it("still fakes conforming documents for realistic schemas, the same for the same seed", () => {
    const document = fakeDocument(investigation, 3);
    expect(conforms(investigation, document)).toBe(true);
    expect(fakeDocument(investigation, 3)).toBe(document);
  });

  it("never changes the schema it is given", () => {
    const schema = { type: "string", maxLength: 5_000 };
    fakeDocument(schema, 1);
    expect(schema).toEqual({ type: "string", maxLength: 5_000 });
  });
});

describe("the simulated provider answers a schema it cannot fake with a labelled object", () => {
  it("answers a recursive schema in JSON-schema mode with the labelled fallback", () => {
    const text = simulatedAnswer({
      lastUserText: "loop",
      format: { kind: "json-schema", schema: { allOf: [{ $ref: "#" }] } },
      seed: 1,
    });
    expect(labelled(text)).toEqual({ promptgate_simulated: true, echo: "loop" });
  });

  it("answers an OpenAI call whose schema loops, instead of hanging", async () => {
    const response = await createSimulatedProvider().fetch(
      new Request(`${simulatedOrigin}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-test",
          messages: [{ role: "user", content: "loop" }],
          response_format: { type: "json_schema", json_schema: { name: "loop", schema: { allOf: [{ $ref: "#" }] } } },
        }),
      }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(labelled(body.choices[0]?.message.content ?? "")).toMatchObject({ promptgate_simulated: true });
  });
});
