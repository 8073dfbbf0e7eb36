import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OracleGateway, startOracleGateway } from "./support/harness.js";
import { openaiChatSpec } from "./support/openai-chat-spec.js";
import { openaiChatRules, oracleCount } from "./support/oracle.js";
import { surfaceProperty } from "./support/run-property.js";

let gateway: OracleGateway;
beforeAll(async () => {
  gateway = await startOracleGateway();
});
afterAll(() => gateway.close());

describe("the oracle of OpenAI Chat Completions", () => {
  it("counts text, names and unknown fields, and leaves out the closed list and vocabularies", () => {
    const body = {
      model: "gpt-4o-mini",
      temperature: 0.2,
      metadata: { anything: "goes here" },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", name: "ann", content: [{ type: "text", text: "héllo 😀" }] },
      ],
      oracle_extra: "abc",
    };
    // keys: messages 8, role 4 ×2, content 7 ×2, name 4, type 4, text 4 = 42 known, oracle_extra 12;
    // strings: "Be brief." 9, "ann" 3, "héllo 😀" 7, "abc" 3 = 22.
    expect(oracleCount(body, openaiChatRules)).toEqual({ chars: 76, knownKeyChars: 42 });
  });

  it("leaves out binary media and counts text-like file data decoded", () => {
    const text = Buffer.from("ünïcode", "utf8").toString("base64");
    const body = {
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
            { type: "file", file: { filename: "a.txt", file_data: `data:text/plain;base64,${text}` } },
            { type: "file", file: { filename: "b.md", file_data: text } },
            { type: "file", file: { filename: "c.pdf", file_data: "JVBERi0xLjQK" } },
          ],
        },
      ],
    };
    const keys =
      "messages".length +
      "role".length +
      "content".length +
      4 * "type".length +
      "image_url".length +
      "url".length +
      "detail".length;
    const files = 3 * ("file".length + "filename".length + "file_data".length);
    // "low" is a vocabulary value; the PNG and the PDF are binary; the two text files decode to 7 code points each.
    const strings = "a.txt".length + 7 + "b.md".length + 7 + "c.pdf".length;
    expect(oracleCount(body, openaiChatRules).chars).toBe(keys + files + strings);
  });

  it("counts a vocabulary value outside its set, and a null member's key", () => {
    const body = { messages: [{ role: "narrator", content: null }], tool_choice: "auto" };
    expect(oracleCount(body, openaiChatRules).chars).toBe(8 + 4 + 8 + 7 + 11);
  });
});

describe("OpenAI Chat Completions against the oracle", () => {
  it("measures every accepted call at least as the oracle does, and never sends S over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(openaiChatSpec, gateway);
    expect(stats.failures).toEqual([]);
  }, 900_000);

  // The gateway forwards the client's bytes: a number literal reaches the provider as written, whatever it parses to.
  it("measures a long number literal as the upstream receives it", async () => {
    const stats = await surfaceProperty(openaiChatSpec, gateway, "number");
    expect(stats.failures).toEqual([]);
  }, 900_000);

  it("never sends a number literal over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(openaiChatSpec, gateway, "number-bounded");
    expect(stats.failures).toEqual([]);
  }, 900_000);
});
