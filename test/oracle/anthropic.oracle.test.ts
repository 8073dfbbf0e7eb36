import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicSpec } from "./support/anthropic-spec.js";
import { type OracleGateway, startOracleGateway } from "./support/harness.js";
import { anthropicRules, oracleCount } from "./support/oracle.js";
import { surfaceProperty } from "./support/run-property.js";

let gateway: OracleGateway;
beforeAll(async () => {
  gateway = await startOracleGateway();
});
afterAll(() => gateway.close());

describe("the oracle of Anthropic Messages", () => {
  it("counts system, blocks and ids, and leaves out cache_control, is_error, citations settings and the closed list", () => {
    const body = {
      model: "claude",
      max_tokens: 10,
      thinking: { type: "enabled", budget_tokens: 100 },
      system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "r", is_error: false },
            {
              type: "document",
              source: { type: "text", media_type: "text/plain", data: "doc" },
              citations: { enabled: true },
            },
          ],
        },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
    };
    // keys: system 6, type 4 ×5, text 4, messages 8, role 4, content 7 ×2, tool_use_id 11, source 6,
    // media_type 10, data 4, tool_choice 11 = 98; strings: "sys" 3, "t1" 2, "r" 1, "doc" 3 = 9.
    expect(oracleCount(body, anthropicRules).chars).toBe(107);
  });

  it("leaves out base64 images and PDFs, and decodes a base64 text document", () => {
    const body = {
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
            {
              type: "document",
              source: { type: "base64", media_type: "text/plain", data: Buffer.from("héllo").toString("base64") },
              title: "T",
            },
          ],
        },
      ],
    };
    const keys = 8 + 4 + 7 + 3 * (4 + 6 + 4 + 10 + 4) + 5;
    expect(oracleCount(body, anthropicRules).chars).toBe(keys + 5 + 1);
  });
});

describe("Anthropic Messages against the oracle", () => {
  it("measures every accepted call at least as the oracle does, and never sends S over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(anthropicSpec, gateway);
    expect(stats.failures).toEqual([]);
  }, 900_000);

  // The gateway forwards the client's bytes: a number literal reaches the provider as written, whatever it parses to.
  it("measures a long number literal as the upstream receives it", async () => {
    const stats = await surfaceProperty(anthropicSpec, gateway, "number");
    expect(stats.failures).toEqual([]);
  }, 900_000);

  it("never sends a number literal over investigation.bounded's limit", async () => {
    const stats = await surfaceProperty(anthropicSpec, gateway, "number-bounded");
    expect(stats.failures).toEqual([]);
  }, 900_000);
});
