import fc from "fast-check";
import {
  base64Of,
  binaryBase64,
  binaryMediaType,
  compact,
  cross,
  jsonSchemaArb,
  optional,
  smallName,
  smallText,
  textMediaType,
} from "./gen.js";
import type { SurfaceSpec } from "./insert.js";
import { camel, geminiRules, isObject, type Json, type JsonObject, type Path } from "./oracle.js";

/** A Gemini name in camelCase or snake_case. */
function spell(name: string, snake: boolean): string {
  return snake ? name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) : name;
}

/** Respells every key of a (known-shaped) object tree. */
function respell(value: Json, snake: boolean): Json {
  if (Array.isArray(value)) return value.map((item) => respell(item, snake));
  if (!isObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, member] of Object.entries(value)) result[spell(key, snake)] = respell(member, snake);
  return result;
}

const media = (mimeType: string | undefined, data: string): JsonObject => compact({ mimeType, data });

/** One part, in camelCase; respelled afterwards. `nullMember` adds a null media member in the other spelling. */
const partCamel: fc.Arbitrary<JsonObject> = fc.oneof(
  cross,
  { weight: 4, arbitrary: fc.record({ text: smallText }) },
  fc.record({ inlineData: fc.tuple(binaryMediaType, binaryBase64).map(([type, data]) => media(type, data)) }),
  fc.record({ inlineData: fc.tuple(textMediaType, smallText).map(([type, text]) => media(type, base64Of(text))) }),
  fc.record({
    fileData: fc.record(
      {
        mimeType: binaryMediaType,
        fileUri: fc.constant("https://generativelanguage.googleapis.com/v1beta/files/abc123"),
        displayName: smallText,
      },
      { requiredKeys: ["mimeType", "fileUri"] },
    ),
  }),
  fc
    .record(
      { name: smallName, args: fc.dictionary(smallName, smallText, { maxKeys: 2 }), id: smallName },
      { requiredKeys: ["name", "args"] },
    )
    .map((functionCall) => ({ functionCall })),
  fc
    .record(
      { name: smallName, response: fc.record({ result: smallText }), id: smallName },
      { requiredKeys: ["name", "response"] },
    )
    .map((functionResponse) => ({ functionResponse })),
  // A text document by URI: content the gateway cannot measure.
  fc.constant({
    fileData: { mimeType: "text/plain", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/txt1" },
  }),
  fc.record({ executableCode: fc.record({ language: fc.constant("PYTHON"), code: smallText }) }),
  fc.record({ codeExecutionResult: fc.record({ outcome: fc.constant("OUTCOME_OK"), output: smallText }) }),
  fc.record({ text: smallText, thought: fc.constant(true) }),
  fc
    .record({ name: smallName, signature: binaryBase64 })
    .map(({ name, signature }) => ({ functionCall: { name, args: {} }, thoughtSignature: signature })),
  fc.record({
    inlineData: fc.tuple(fc.constant("video/mp4"), binaryBase64).map(([type, data]) => media(type, data)),
    videoMetadata: fc.constant({ startOffset: "1s", endOffset: "2s" }),
  }),
);

const part: fc.Arbitrary<JsonObject> = fc
  .record({ part: partCamel, snake: fc.boolean(), nullMember: fc.nat(5) })
  .map(({ part: camelPart, snake, nullMember }) => {
    const spelled = respell(camelPart, snake) as JsonObject;
    // A null media member, in either spelling, beside the part's own member: absent.
    if (nullMember === 0) spelled[spell("inlineData", !snake)] = null;
    if (nullMember === 1) spelled[spell("fileData", snake)] ??= null;
    return spelled;
  });

const content = fc.record({
  role: fc.constantFrom("user", "model"),
  parts: fc.array(part, { minLength: 1, maxLength: 3 }),
});

const openApiSchema: fc.Arbitrary<JsonObject> = fc
  .record({ names: fc.uniqueArray(smallName, { minLength: 1, maxLength: 3 }), description: optional(smallText) })
  .map(({ names, description }) =>
    compact({
      type: "OBJECT",
      description,
      properties: Object.fromEntries(names.map((name) => [name, { type: "STRING" }])),
      required: names,
    }),
  );

export const geminiBody: fc.Arbitrary<JsonObject> = fc
  .record({
    snake: fc.boolean(),
    contents: fc.array(content, { minLength: 1, maxLength: 3 }),
    systemInstruction: optional(
      fc.record(
        { parts: fc.array(fc.record({ text: smallText }), { minLength: 1, maxLength: 2 }), role: fc.constant("user") },
        { requiredKeys: ["parts"] },
      ),
    ),
    tools: optional(
      fc.array(
        fc.oneof(
          cross,
          fc
            .array(
              fc.record(
                { name: smallName, description: smallText, parameters: jsonSchemaArb },
                { requiredKeys: ["name"] },
              ),
              { minLength: 1, maxLength: 2 },
            )
            .map((functionDeclarations) => ({ functionDeclarations })),
          fc.constant({ googleSearch: {} }),
          fc.constant({ codeExecution: {} }),
        ),
        { minLength: 1, maxLength: 2 },
      ),
    ),
    toolConfig: optional(
      fc.record({
        functionCallingConfig: fc.record(
          { mode: fc.constantFrom("AUTO", "ANY", "NONE"), allowedFunctionNames: fc.array(smallName, { maxLength: 2 }) },
          { requiredKeys: ["mode"] },
        ),
      }),
    ),
    generationConfig: optional(
      fc
        .record(
          {
            temperature: fc.double({ min: 0, max: 2, noNaN: true }),
            topP: fc.constant(0.95),
            topK: fc.constant(40),
            maxOutputTokens: fc.integer({ min: 1, max: 8192 }),
            candidateCount: fc.constant(1),
            stopSequences: fc.array(smallText, { maxLength: 2 }),
            seed: fc.integer(),
            thinkingConfig: fc.constant({ thinkingBudget: 0 }),
            schema: fc.oneof(
              cross,
              jsonSchemaArb.map((schema) => ({ responseJsonSchema: schema })),
              openApiSchema.map((schema) => ({ responseSchema: schema })),
            ),
          },
          { requiredKeys: [] },
        )
        .map(({ schema, ...config }) =>
          schema ? { ...config, responseMimeType: "application/json", ...schema } : (config as JsonObject),
        ),
    ),
    safetySettings: optional(fc.constant([{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }])),
    labels: optional(fc.dictionary(smallName, smallName, { maxKeys: 2 })),
    cachedContent: optional(fc.constant(null)),
  })
  .map(({ snake, contents, ...rest }) => {
    // The parts keep their own spelling; the other members take the body's.
    const top: JsonObject = { contents };
    for (const [key, value] of Object.entries(compact(rest))) {
      // A schema's own keywords keep their names: only Gemini's member names are respelled.
      top[spell(key, snake)] =
        key === "generationConfig"
          ? Object.fromEntries(
              Object.entries(value as JsonObject).map(([name, member]) => [
                spell(name, snake),
                name === "responseJsonSchema" || name === "responseSchema" ? member : respell(member, snake),
              ]),
            )
          : key === "tools"
            ? (value as JsonObject[]).map((tool) =>
                Object.fromEntries(
                  Object.entries(tool).map(([name, member]) => [
                    spell(name, snake),
                    Array.isArray(member)
                      ? member.map((declaration) =>
                          Object.fromEntries(
                            Object.entries(declaration as JsonObject).map(([field, v]) => [spell(field, snake), v]),
                          ),
                        )
                      : member,
                  ]),
                ),
              )
            : respell(value, snake);
    }
    return top;
  });

/** Whether a path lies in a response schema, which the gateway projects before sending. */
function inResponseSchema(path: Path): boolean {
  return (
    path.length >= 2 &&
    camel(String(path[0])) === "generationConfig" &&
    (camel(String(path[1])) === "responseJsonSchema" || camel(String(path[1])) === "responseSchema")
  );
}

export const geminiSpec: SurfaceSpec = {
  name: "gemini",
  rules: geminiRules,
  body: geminiBody,
  isPartArray: (path) =>
    path.length > 0 && typeof path[path.length - 1] === "string" && camel(String(path[path.length - 1])) === "parts",
  unknownPart(s, variant): Json {
    const forms: Json[] = [
      { oracleData: { text: s } },
      { oracle_part: s },
      { text: "a", oracleExtra: s },
      { inlineData: null, oracleNote: s },
      { inline_data: null, file_data: null, oracle: [s] },
    ];
    return forms[variant % forms.length]!;
  },
  isMediaObject(path, object) {
    const holder = path.length > 0 ? camel(String(path[path.length - 1])) : "";
    if (holder === "inlineData" || holder === "fileData") return true;
    return Object.keys(object).some((key) => camel(key) === "inlineData" || camel(key) === "fileData");
  },
  addTextMedia(body, s, variant) {
    const data = base64Of(s);
    const types = [
      "text/plain",
      "application/json",
      "text/markdown",
      "text/csv",
      undefined,
      "text/plain; charset=utf-8",
      "Text/Plain",
    ];
    const mimeType = types[variant % types.length];
    const snake = (variant >> 3) % 2 === 1;
    const part: JsonObject = {
      [spell("inlineData", snake)]: snake ? compact({ mime_type: mimeType, data }) : compact({ mimeType, data }),
    };
    const beside = (variant >> 4) % 3;
    // The other spelling beside it: null (absent), or a binary member (conflicting spellings).
    if (beside === 1) part[spell("inlineData", !snake)] = null;
    if (beside === 2) part[spell("inlineData", !snake)] = media("image/png", "iVBORw0KGgo=");
    if (beside === 2 && !snake) {
      // camelCase first or snake_case first, as written.
      const [[k1, v1], [k2, v2]] = Object.entries(part) as [[string, Json], [string, Json]];
      for (const key of Object.keys(part)) delete part[key];
      if ((variant >> 6) % 2 === 0) Object.assign(part, { [k2]: v2, [k1]: v1 });
      else Object.assign(part, { [k1]: v1, [k2]: v2 });
    }
    if (beside === 2 && snake) part.inlineData = { mimeType: "image/png", data: "iVBORw0KGgo=" };
    const contents = body.contents as JsonObject[];
    const target = contents.findIndex((entry) => entry.role === "user");
    if (target >= 0 && (variant >> 5) % 2 === 0) {
      const parts = contents[target]!.parts as Json[];
      parts.push(part);
      return ["contents", target, "parts", parts.length - 1];
    }
    contents.push({ role: "user", parts: [part] });
    return ["contents", contents.length - 1, "parts", 0];
  },
  rewritten: inResponseSchema,
};
