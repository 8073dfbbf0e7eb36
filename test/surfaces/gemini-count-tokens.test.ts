import { describe, expect, it } from "vitest";
import { parseCountTokens } from "../../src/surfaces/gemini/parse-count-tokens.js";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy } from "../window/fixtures.js";
import { expectInvalidRequest } from "./gateway-error-of.js";

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;
const contents = [
  { role: "user", parts: [{ text: "Hello" }, { inlineData: { mimeType: "image/png", data: "AA==" } }] },
];
const schema = { type: "object", properties: { answer: { type: "string" } } };

describe("parseCountTokens", () => {
  it("reads contents as the call's messages and media", () => {
    const call = parseCountTokens({ contents }, "gemini-2.5-flash");
    expect(call.messages).toEqual(["Hello"]);
    expect(call.mediaParts).toBe(1);
  });

  it("takes the model from its argument and never streams", () => {
    const call = parseCountTokens({ contents }, "gemini-2.5-flash");
    expect(call.model).toBe("gemini-2.5-flash");
    expect(call.stream).toBe(false);
  });

  it("reads a generateContentRequest as a whole generateContent body", () => {
    const call = parseCountTokens(
      {
        generateContentRequest: {
          model: "models/gemini-2.5-flash",
          contents,
          systemInstruction: { parts: [{ text: "Be exact." }] },
          tools: [{ functionDeclarations: [{ name: "lookup" }] }],
          generationConfig: { responseJsonSchema: schema },
        },
      },
      "gemini-2.5-flash",
    );
    expect(call.system).toEqual(["Be exact."]);
    expect(call.messages).toEqual(["Hello"]);
    expect(call.tools).toEqual([{ functionDeclarations: [{ name: "lookup" }] }]);
    expect(call.responseSchema).toEqual(schema);
    expect(call.stream).toBe(false);
  });

  it("reads the cachedContent of a generateContentRequest as its cached prefix", () => {
    const call = parseCountTokens({ generateContentRequest: { contents, cachedContent: "cachedContents/abc" } }, "m");
    expect(call.cachedPrefix).toEqual({ kind: "cached-content", id: "cachedContents/abc" });
  });

  it("reads a generate_content_request in snake_case like a generateContentRequest", () => {
    const call = parseCountTokens(
      { generate_content_request: { contents, system_instruction: { parts: [{ text: "Be exact." }] } } },
      "m",
    );
    expect(call.system).toEqual(["Be exact."]);
    expect(call.messages).toEqual(["Hello"]);
  });

  it("measures contents and the same contents inside a generateContentRequest alike", () => {
    const direct = measure(parseCountTokens({ contents }, "m"), preflight);
    const wrapped = measure(parseCountTokens({ generateContentRequest: { contents } }, "m"), preflight);
    expect(wrapped).toEqual(direct);
  });

  it("answers an empty call for a body with neither contents nor generateContentRequest", () => {
    const call = parseCountTokens({}, "gemini-2.5-flash");
    expect(call).toMatchObject({ model: "gemini-2.5-flash", system: [], messages: [], tools: [], mediaParts: 0 });
    expect(measure(call, preflight).total_chars).toBe(0);
  });

  it("refuses contents and generateContentRequest together", () => {
    expectInvalidRequest(() => parseCountTokens({ contents, generateContentRequest: { contents } }, "m"), "contents");
  });

  it("refuses contents and generate_content_request together", () => {
    expectInvalidRequest(() => parseCountTokens({ contents, generate_content_request: { contents } }, "m"), "contents");
  });

  it("refuses generateContentRequest and generate_content_request together", () => {
    expectInvalidRequest(
      () => parseCountTokens({ generateContentRequest: { contents }, generate_content_request: { contents } }, "m"),
      "generateContentRequest",
    );
  });

  it("refuses contents that are not an array, without the value", () => {
    expectInvalidRequest(() => parseCountTokens({ contents: "SECRET-PROMPT-TEXT" }, "m"), "contents", [
      "SECRET-PROMPT-TEXT",
    ]);
  });

  it("refuses a generateContentRequest that is not an object, without the value", () => {
    expectInvalidRequest(
      () => parseCountTokens({ generateContentRequest: "SECRET-PROMPT-TEXT" }, "m"),
      "generateContentRequest",
      ["SECRET-PROMPT-TEXT"],
    );
  });

  it("names the field inside contents at fault", () => {
    expectInvalidRequest(
      () => parseCountTokens({ contents: [{ parts: [{ text: 4711 }] }] }, "m"),
      "contents[0].parts[0].text",
      ["4711"],
    );
  });

  // parseGenerateContent, whose paths start at the body root, so a wrong field inside the
  // request is named `contents[0]...` although the client sent
  // `generateContentRequest.contents[0]...`. Suggested fix: give parseGenerateContent a path
  // prefix argument ("" by default) and pass "generateContentRequest." here.
  it("names a wrong field inside generateContentRequest by its full path", () => {
    expectInvalidRequest(
      () => parseCountTokens({ generateContentRequest: { contents: [{ parts: [{ text: 4711 }] }] } }, "m"),
      "generateContentRequest.contents[0].parts[0].text",
    );
  });
});
