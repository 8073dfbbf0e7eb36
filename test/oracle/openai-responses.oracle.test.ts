import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OracleGateway, startOracleGateway } from "./support/harness.js";
import { openaiResponsesSpec } from "./support/openai-responses-spec.js";
import { openaiResponsesRules, oracleCount } from "./support/oracle.js";
import { surfaceProperty } from "./support/run-property.js";

let gateway: OracleGateway;
beforeAll(async () => {
  gateway = await startOracleGateway();
});
afterAll(() => gateway.close());

describe("the oracle of OpenAI Responses", () => {
  it("counts instructions, items and ids, and leaves out the closed list, reasoning's members and vocabularies", () => {
    const body = {
      model: "gpt-4o-mini",
      instructions: "Be 😀",
      reasoning: { effort: "high", summary: "auto" },
      text: {
        verbosity: "low",
        format: { type: "json_schema", name: "out", strict: true, schema: { type: "object" } },
      },
      input: [
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "ok", logprobs: [] }],
        },
      ],
    };
    // keys: instructions 12, reasoning 9, text 4 ×2, format 6, type 4 ×5, name 4 ×2, schema 6, input 5, call_id 7,
    // arguments 9, role 4, status 6, content 7 = 107; strings: "Be 😀" 4, "out" 3, "object" 6 (a schema's type
    // is no vocabulary of the surface), "c1" 2, "f" 1, "{}" 2, "ok" 2 = 20.
    expect(oracleCount(body, openaiResponsesRules).chars).toBe(127);
  });

  it("leaves out input images and a PDF, and decodes a text file named by its extension", () => {
    const body = {
      input: [
        {
          role: "user",
          content: [
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" },
            { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
            { type: "input_file", filename: "a.csv", file_data: Buffer.from("x,y\n1,2").toString("base64") },
          ],
        },
      ],
    };
    const keys = 5 + 4 + 7 + 3 * 4 + 9 + 6 + 2 * (8 + 9);
    expect(oracleCount(body, openaiResponsesRules).chars).toBe(keys + 5 + 5 + 7);
  });
});

describe("OpenAI Responses against the oracle", () => {
  it("measures every accepted call at least as the oracle does, and never sends S over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(openaiResponsesSpec, gateway);
    expect(stats.failures).toEqual([]);
  }, 900_000);

  // The gateway forwards the client's bytes: a number literal reaches the provider as written, whatever it parses to.
  it("measures a long number literal as the upstream receives it", async () => {
    const stats = await surfaceProperty(openaiResponsesSpec, gateway, "number");
    expect(stats.failures).toEqual([]);
  }, 900_000);

  it("never sends a number literal over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(openaiResponsesSpec, gateway, "number-bounded");
    expect(stats.failures).toEqual([]);
  }, 900_000);
});
