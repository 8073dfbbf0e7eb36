import { describe, expect, it } from "vitest";
import { geminiMember } from "../../src/surfaces/gemini/gemini-member.js";
import { expectInvalidRequest, gatewayErrorOf } from "./gateway-error-of.js";

describe("geminiMember", () => {
  it("reads a member by its camelCase JSON name", () => {
    expect(geminiMember({ systemInstruction: "a" }, "systemInstruction", "")).toBe("a");
  });

  it("reads a member by its snake_case proto name", () => {
    expect(geminiMember({ system_instruction: "a" }, "systemInstruction", "")).toBe("a");
  });

  it("converts every capital letter of the name, e.g. response_json_schema", () => {
    expect(geminiMember({ response_json_schema: { type: "string" } }, "responseJsonSchema", "")).toEqual({
      type: "string",
    });
  });

  it("answers undefined when neither spelling is present", () => {
    expect(geminiMember({ other: 1 }, "cachedContent", "")).toBeUndefined();
  });

  it("reads a name without capitals once, as its only spelling", () => {
    expect(geminiMember({ contents: [] }, "contents", "")).toEqual([]);
  });

  it("refuses both spellings at once as INVALID_REQUEST naming the camelCase path", () => {
    expectInvalidRequest(
      () => geminiMember({ cachedContent: "secret-a", cached_content: "secret-b" }, "cachedContent", ""),
      "cachedContent",
      ["secret-a", "secret-b"],
    );
  });

  it("prefixes the path of a nested member", () => {
    expectInvalidRequest(
      () => geminiMember({ inlineData: {}, inline_data: {} }, "inlineData", "contents[0].parts[1]."),
      "contents[0].parts[1].inlineData",
    );
  });

  it("names both spellings in the conflict message", () => {
    const error = gatewayErrorOf(() => geminiMember({ functionCall: {}, function_call: {} }, "functionCall", ""));
    expect(error.message).toContain("functionCall");
    expect(error.message).toContain("function_call");
  });
});
