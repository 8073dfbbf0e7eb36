import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import { parseGenerateContent } from "../../src/surfaces/gemini/parse-generate-content.js";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy, boundedRef } from "../window/fixtures.js";
import { expectInvalidRequest, fromJsonText } from "./gateway-error-of.js";

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;
const schema = { type: "object", properties: { answer: { type: "string" } } };

function parse(body: JsonObject) {
  return parseGenerateContent(body, "gemini-2.5-flash", false);
}

function userParts(...parts: unknown[]): JsonObject {
  return { contents: [{ role: "user", parts }] };
}

describe("parseGenerateContent", () => {
  it("takes the model and the stream flag from its arguments", () => {
    const call = parseGenerateContent({ contents: [] }, "gemini-2.5-pro", true);
    expect(call.model).toBe("gemini-2.5-pro");
    expect(call.stream).toBe(true);
  });

  it("takes the text parts of every content as message text", () => {
    const call = parse({
      contents: [
        { role: "user", parts: [{ text: "Hello" }, { text: "there" }] },
        { role: "model", parts: [{ text: "Hi" }] },
      ],
    });
    expect(call.messages).toEqual(["Hello", "there", "Hi"]);
  });

  it("takes systemInstruction's parts as system text", () => {
    const call = parse({ contents: [], systemInstruction: { parts: [{ text: "Be exact." }, { text: "Cite." }] } });
    expect(call.system).toEqual(["Be exact.", "Cite."]);
  });

  it("takes system_instruction's parts as system text", () => {
    const call = parse({ contents: [], system_instruction: { parts: [{ text: "Be exact." }] } });
    expect(call.system).toEqual(["Be exact."]);
  });

  it("takes a systemInstruction string as system text", () => {
    expect(parse({ contents: [], systemInstruction: "Be exact." }).system).toEqual(["Be exact."]);
  });

  it("refuses systemInstruction and system_instruction together", () => {
    expectInvalidRequest(
      () => parse({ contents: [], systemInstruction: { parts: [] }, system_instruction: { parts: [] } }),
      "systemInstruction",
    );
  });

  it("counts inlineData and fileData parts as media parts, not as text", () => {
    const call = parse(
      userParts(
        { text: "Look" },
        { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
        { fileData: { mimeType: "application/pdf", fileUri: "gs://bucket/file.pdf" } },
      ),
    );
    expect(call.mediaParts).toBe(2);
    expect(call.messages).toEqual(["Look"]);
  });

  it("counts inline_data and file_data parts as media parts too", () => {
    const call = parse(
      userParts(
        { inline_data: { mime_type: "image/png", data: "iVBORw0KGgo=" } },
        { file_data: { mime_type: "video/mp4", file_uri: "gs://b/v.mp4" } },
      ),
    );
    expect(call.mediaParts).toBe(2);
    expect(call.messages).toEqual([]);
  });

  it("refuses inlineData and inline_data in one part", () => {
    expectInvalidRequest(
      () => parse(userParts({ inlineData: { data: "A" }, inline_data: { data: "B" } })),
      "contents[0].parts[0].inlineData",
    );
  });

  it("takes a functionCall part as its name and its args as compact JSON", () => {
    const call = parse({
      contents: [{ role: "model", parts: [{ functionCall: { name: "lookup", args: { id: 7 } } }] }],
    });
    expect(call.messages).toEqual(["lookup", '{"id":7}']);
  });

  it("takes a function_call part like a functionCall part", () => {
    const call = parse({
      contents: [{ role: "model", parts: [{ function_call: { name: "lookup", args: { id: 7 } } }] }],
    });
    expect(call.messages).toEqual(["lookup", '{"id":7}']);
  });

  it("refuses functionCall and function_call in one part", () => {
    expectInvalidRequest(
      () => parse(userParts({ functionCall: { name: "a" }, function_call: { name: "b" } })),
      "contents[0].parts[0].functionCall",
    );
  });

  it("takes a functionResponse part as its name and its response as compact JSON", () => {
    const call = parse(userParts({ functionResponse: { name: "lookup", response: { result: "found" } } }));
    expect(call.messages).toEqual(["lookup", '{"result":"found"}']);
  });

  it("takes a function_response part like a functionResponse part", () => {
    const call = parse(userParts({ function_response: { name: "lookup", response: { result: "found" } } }));
    expect(call.messages).toEqual(["lookup", '{"result":"found"}']);
  });

  it("takes executableCode and codeExecutionResult parts as their code and output", () => {
    const call = parse({
      contents: [
        {
          role: "model",
          parts: [
            { executableCode: { language: "PYTHON", code: "print(1)" } },
            { code_execution_result: { outcome: "OUTCOME_OK", output: "1\n" } },
          ],
        },
      ],
    });
    expect(call.messages).toEqual(["print(1)", "1\n"]);
  });

  it("does not count a part's thought signature", () => {
    const call = parse({ contents: [{ role: "model", parts: [{ text: "Hi", thoughtSignature: "c2lnbmF0dXJl" }] }] });
    expect(call.messages).toEqual(["Hi"]);
  });

  it("counts nothing for a part that carries only a thought signature", () => {
    const call = parse({ contents: [{ role: "model", parts: [{ thought: true, thought_signature: "c2ln" }] }] });
    expect(call.messages).toEqual([]);
  });

  it("counts a member of a part that Gemini does not know as an unknown field, with its key", () => {
    const call = parse(userParts({ futurePart: { value: 1 } }));
    expect(call.messages).toEqual([]);
    expect(call.other).toEqual([
      { path: "contents[0].parts[0].futurePart", chars: '"futurePart":{"value":1}'.length, unknown: true },
    ]);
  });

  it("collects the tools as tool declarations", () => {
    const tools = [{ functionDeclarations: [{ name: "lookup" }] }, { googleSearch: {} }];
    expect(parse({ contents: [], tools }).tools).toEqual(tools);
  });

  it("records cachedContent as a cached prefix of kind cached-content", () => {
    const call = parse({ contents: [], cachedContent: "cachedContents/abc" });
    expect(call.cachedPrefix).toEqual({ kind: "cached-content", id: "cachedContents/abc" });
  });

  it("records cached_content as a cached prefix too", () => {
    const call = parse({ contents: [], cached_content: "cachedContents/abc" });
    expect(call.cachedPrefix).toEqual({ kind: "cached-content", id: "cachedContents/abc" });
  });

  it("refuses cachedContent and cached_content together", () => {
    expectInvalidRequest(
      () => parse({ contents: [], cachedContent: "cachedContents/a", cached_content: "cachedContents/b" }),
      "cachedContent",
      ["cachedContents/a", "cachedContents/b"],
    );
  });

  it("records no cached prefix without cachedContent", () => {
    expect(parse({ contents: [] }).cachedPrefix).toBeUndefined();
  });

  it("takes generationConfig.responseJsonSchema as the response schema", () => {
    expect(parse({ contents: [], generationConfig: { responseJsonSchema: schema } }).responseSchema).toEqual(schema);
  });

  it("takes generation_config.response_json_schema as the response schema", () => {
    expect(parse({ contents: [], generation_config: { response_json_schema: schema } }).responseSchema).toEqual(schema);
  });

  it("takes generationConfig.responseSchema (OpenAPI) as the response schema", () => {
    const openApi = { type: "OBJECT", properties: { answer: { type: "STRING" } } };
    expect(parse({ contents: [], generationConfig: { responseSchema: openApi } }).responseSchema).toEqual(openApi);
  });

  it("takes generationConfig.response_schema as the response schema", () => {
    const openApi = { type: "OBJECT" };
    expect(parse({ contents: [], generationConfig: { response_schema: openApi } }).responseSchema).toEqual(openApi);
  });

  it("refuses responseJsonSchema and responseSchema together", () => {
    expectInvalidRequest(
      () =>
        parse({ contents: [], generationConfig: { responseJsonSchema: schema, responseSchema: { type: "OBJECT" } } }),
      "generationConfig.responseJsonSchema",
    );
  });

  it("refuses responseJsonSchema and response_json_schema together", () => {
    expectInvalidRequest(
      () => parse({ contents: [], generationConfig: { responseJsonSchema: schema, response_json_schema: schema } }),
      "generationConfig.responseJsonSchema",
    );
  });

  it("refuses generationConfig and generation_config together", () => {
    expectInvalidRequest(
      () => parse({ contents: [], generationConfig: {}, generation_config: {} }),
      "generationConfig",
    );
  });

  it("has no response schema without one in the generation config", () => {
    expect(parse({ contents: [], generationConfig: { temperature: 0 } }).responseSchema).toBeUndefined();
  });

  // Schema object) without checking its type, so a string or array is accepted, measured and
  // forwarded, while every other surface refuses a non-object schema as INVALID_REQUEST
  // (contract 5: wrong field types). Suggested fix: read it with
  // `optionalObject(openApiSchema, "generationConfig.responseSchema")`.
  it("refuses a responseSchema that is a string as INVALID_REQUEST", () => {
    expectInvalidRequest(
      () => parse({ contents: [], generationConfig: { responseSchema: "SECRET-SCHEMA" } }),
      "generationConfig.responseSchema",
      ["SECRET-SCHEMA"],
    );
  });
});

describe("parseGenerateContent refusing wrong field types", () => {
  const secret = "SECRET-PROMPT-TEXT";
  const cases: { what: string; param: string; body: JsonObject }[] = [
    { what: "missing contents", param: "contents", body: {} },
    { what: "contents that are an object", param: "contents", body: { contents: { parts: [{ text: secret }] } } },
    { what: "a content that is a string", param: "contents[1]", body: { contents: [{ parts: [] }, secret] } },
    { what: "a content without parts", param: "contents[0].parts", body: { contents: [{ role: "user" }] } },
    { what: "parts that are a string", param: "contents[0].parts", body: { contents: [{ parts: secret }] } },
    { what: "a part that is a string", param: "contents[0].parts[1]", body: userParts({ text: "a" }, secret) },
    { what: "a text that is not a string", param: "contents[0].parts[0].text", body: userParts({ text: [secret] }) },
    {
      what: "a functionCall that is a string",
      param: "contents[0].parts[0].functionCall",
      body: userParts({ functionCall: secret }),
    },
    {
      what: "a functionCall name that is not a string",
      param: "contents[0].parts[0].functionCall.name",
      body: userParts({ functionCall: { name: 4711 } }),
    },
    {
      what: "a functionResponse that is an array",
      param: "contents[0].parts[0].functionResponse",
      body: userParts({ functionResponse: [secret] }),
    },
    {
      what: "an executableCode that is a string",
      param: "contents[0].parts[0].executableCode",
      body: userParts({ executableCode: secret }),
    },
    {
      what: "a codeExecutionResult that is a string",
      param: "contents[0].parts[0].codeExecutionResult",
      body: userParts({ codeExecutionResult: secret }),
    },
    {
      what: "a systemInstruction that is a number",
      param: "systemInstruction",
      body: { contents: [], systemInstruction: 4711 },
    },
    {
      what: "a system_instruction whose parts are a string",
      param: "systemInstruction.parts",
      body: { contents: [], system_instruction: { parts: secret } },
    },
    {
      what: "a system instruction text that is not a string",
      param: "systemInstruction.parts[0].text",
      body: { contents: [], systemInstruction: { parts: [{ text: 4711 }] } },
    },
    { what: "tools that are an object", param: "tools", body: { contents: [], tools: { secret } } },
    { what: "a cachedContent that is a number", param: "cachedContent", body: { contents: [], cachedContent: 4711 } },
    {
      what: "a cached_content that is an object",
      param: "cachedContent",
      body: { contents: [], cached_content: { secret } },
    },
    {
      what: "a generationConfig that is a string",
      param: "generationConfig",
      body: { contents: [], generationConfig: secret },
    },
    {
      what: "a generation_config that is an array",
      param: "generationConfig",
      body: { contents: [], generation_config: [secret] },
    },
  ];

  for (const { what, param, body } of cases) {
    it(`refuses ${what} as INVALID_REQUEST naming ${param}, without the value`, () => {
      expectInvalidRequest(() => parse(body), param, [secret, "4711"]);
    });
  }
});

describe("measuring a generateContent body", () => {
  const bodyText = String.raw`{
    "systemInstruction": { "parts": [{ "text": "Be exact." }] },
    "contents": [
      { "role": "user", "parts": [
        { "text": "Gr\u00fc\u00dfe \ud834\udd1e" },
        { "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } },
        { "fileData": { "mimeType": "application/pdf", "fileUri": "gs://bucket/f.pdf" } }
      ] },
      { "role": "model", "parts": [{ "functionCall": { "name": "lookup", "args": { "id" : 7 } } }] },
      { "role": "user", "parts": [{ "functionResponse": { "name": "lookup", "response": { "result": "found" } } }] }
    ],
    "tools": [{ "functionDeclarations": [{ "name": "lookup",
      "parameters": { "type": "object", "properties": { "id": { "type": "integer" } } } }] }],
    "generationConfig": {
      "temperature": 0.1,
      "topK": 40,
      "maxOutputTokens": 2048,
      "responseMimeType": "application/json",
      "responseJsonSchema": { "type": "object", "properties": { "antwort": { "type": "string", "description": "\u00dcbersicht" } } }
    }
  }`;
  const compactTool =
    '{"functionDeclarations":[{"name":"lookup","parameters":{"type":"object","properties":{"id":{"type":"integer"}}}}]}';
  const compactSchema = '{"type":"object","properties":{"antwort":{"type":"string","description":"Übersicht"}}}';
  const size = measure(parse(fromJsonText(bodyText)), preflight);

  it("counts systemInstruction as system_chars", () => {
    expect(size.system_chars).toBe(9);
  });

  it("counts text, function calls and function responses as message_chars", () => {
    // "Grüße 𝄞" (7) + "lookup" (6) + '{"id":7}' (8) + "lookup" (6) + '{"result":"found"}' (18)
    expect(size.message_chars).toBe(7 + 6 + 8 + 6 + 18);
  });

  it("counts the tools as compact JSON", () => {
    expect(size.tool_chars).toBe(compactTool.length);
  });

  it("counts the responseJsonSchema as compact JSON", () => {
    expect(size.schema_chars).toBe(compactSchema.length);
  });

  it("counts the inline and file data as media_parts", () => {
    expect(size.media_parts).toBe(2);
  });

  it("adds the categories into the totals and reports the policy", () => {
    const total = 9 + 45 + compactTool.length + compactSchema.length;
    expect(size.total_chars).toBe(total);
    expect(size.conservative_total_chars).toBe(total + 1500);
    expect(size.policy).toBe(boundedRef);
  });

  it("measures the same body in snake_case field names exactly alike", () => {
    const snake = fromJsonText(
      bodyText
        .replace('"systemInstruction"', '"system_instruction"')
        .replace('"inlineData"', '"inline_data"')
        .replace('"fileData"', '"file_data"')
        .replace('"functionCall"', '"function_call"')
        .replace('"functionResponse"', '"function_response"')
        .replace('"generationConfig"', '"generation_config"')
        .replace('"responseJsonSchema"', '"response_json_schema"'),
    );
    expect(measure(parse(snake), preflight)).toEqual(size);
  });

  it("measures the same body written compactly exactly alike", () => {
    expect(measure(parse(fromJsonText(JSON.stringify(JSON.parse(bodyText)))), preflight)).toEqual(size);
  });

  it("does not count temperature, topK, maxOutputTokens, responseMimeType or the model", () => {
    const body = fromJsonText(bodyText);
    const config = body.generationConfig as JsonObject;
    const bare = { ...body, generationConfig: { responseJsonSchema: config.responseJsonSchema } };
    expect(measure(parseGenerateContent(bare, "another-model-name", false), preflight)).toEqual(size);
  });

  it("counts a responseSchema (OpenAPI) as compact JSON like a responseJsonSchema", () => {
    const body = fromJsonText(bodyText.replace('"responseJsonSchema"', '"responseSchema"'));
    expect(measure(parse(body), preflight).schema_chars).toBe(compactSchema.length);
  });

  it("counts the characters that JSON escapes in a text part stand for", () => {
    const call = parse(fromJsonText(String.raw`{"contents":[{"parts":[{"text":"a\n\u00e9\ud83d\ude00\udc00"}]}]}`));
    expect(measure(call, preflight).message_chars).toBe(5);
  });
});

describe("parseGenerateContent with a cached content", () => {
  for (const member of ["systemInstruction", "system_instruction", "tools", "toolConfig"]) {
    it(`refuses ${member} beside cachedContent as INVALID_REQUEST before any provider call`, () => {
      const body = { contents: [], cachedContent: "cachedContents/x", [member]: member.startsWith("tool") ? [] : "s" };
      expect(() => parseGenerateContent(body, "m", false)).toThrowError(
        expect.objectContaining({ code: "INVALID_REQUEST", status: 400 }),
      );
    });
  }
});
