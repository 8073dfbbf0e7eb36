import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiSpec } from "./support/gemini-spec.js";
import { type OracleGateway, startOracleGateway } from "./support/harness.js";
import { geminiRules, oracleCount } from "./support/oracle.js";
import { surfaceProperty } from "./support/run-property.js";

let gateway: OracleGateway;
beforeAll(async () => {
  gateway = await startOracleGateway();
});
afterAll(() => gateway.close());

describe("the oracle of Gemini", () => {
  it("reads both spellings: closed lists, binary media, text-like inline data and null members", () => {
    const text = Buffer.from("ab😀", "utf8").toString("base64");
    const camel = {
      contents: [
        {
          role: "user",
          parts: [
            { text: "hi", thought: true },
            { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
            { inlineData: { mimeType: "text/plain", data: text }, inline_data: null },
            { fileData: { mimeType: "application/pdf", fileUri: "https://x/files/1" } },
          ],
        },
      ],
      generationConfig: { temperature: 1, responseMimeType: "application/json" },
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
    };
    const snake = {
      contents: [
        {
          role: "user",
          parts: [
            { text: "hi", thought: true },
            { inline_data: { mime_type: "image/png", data: "iVBORw0KGgo=" } },
            { inline_data: { mime_type: "text/plain", data: text }, inlineData: null },
            { file_data: { mime_type: "application/pdf", file_uri: "https://x/files/1" } },
          ],
        },
      ],
      generation_config: { temperature: 1, response_mime_type: "application/json" },
      safety_settings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
    };
    // camel keys: contents 8, role 4, parts 5, text 4, inlineData 10 ×2 + inline_data 11 (null), mimeType 8 ×3,
    // data 4 ×2, fileData 8, generationConfig 16 = 108; strings: "hi" 2, decoded "ab😀" 3 = 5.
    expect(oracleCount(camel, geminiRules).chars).toBe(113);
    // snake keys: contents 8, role 4, parts 5, text 4, inline_data 11 ×2 + inlineData 10, mime_type 9 ×3,
    // data 4 ×2, file_data 9, generation_config 17 = 114.
    expect(oracleCount(snake, geminiRules).chars).toBe(119);
  });

  it("counts inline data without a type as text, and an unknown part member", () => {
    const body = {
      contents: [{ parts: [{ inlineData: { data: Buffer.from("xyz").toString("base64") } }, { oracle: "q" }] }],
    };
    expect(oracleCount(body, geminiRules).chars).toBe(8 + 5 + 10 + 4 + 3 + 6 + 1);
  });
});

describe("Gemini against the oracle", () => {
  it("measures every accepted call at least as the oracle does, and never sends S over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(geminiSpec, gateway);
    expect(stats.failures).toEqual([]);
  }, 900_000);

  // The gateway forwards the client's bytes: a number literal reaches the provider as written, whatever it parses to.
  it("measures a long number literal as the upstream receives it", async () => {
    const stats = await surfaceProperty(geminiSpec, gateway, "number");
    expect(stats.failures).toEqual([]);
  }, 900_000);

  it("never sends a number literal over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(geminiSpec, gateway, "number-bounded");
    expect(stats.failures).toEqual([]);
  }, 900_000);
});
