import { invalidRequest } from "../../errors/gateway-error.js";
import type { LogicalCall } from "../../logical-call.js";
import { countInlineData, isBinaryMedia, mediaType } from "../media.js";
import { optionalObject, optionalString } from "../wire-fields.js";
import {
  arrayOf,
  both,
  capture,
  counted,
  json,
  object,
  parameters,
  type Rule,
  required,
  section,
  shape,
  skip,
  text,
  textOr,
  vocabulary,
} from "../wire-rules.js";

/**
 * What the model reads of a Gemini generateContent body (and of a cachedContents create and a
 * countTokens body, which share its parts). Every object takes each member under its JSON name
 * and its proto name (`systemInstruction`, `system_instruction`), as the API does; both at once
 * is a conflict. Not counted: the parameters below and the values of the closed vocabularies.
 */
const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** A Gemini object: its members under either spelling. */
export function message(members: Record<string, Rule>): Rule {
  return object(members, { alias: snakeCase });
}

const generationParameters = parameters(
  "temperature",
  "topP",
  "topK",
  "candidateCount",
  "maxOutputTokens",
  "stopSequences",
  "responseLogprobs",
  "logprobs",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
  "responseMimeType",
  "responseModalities",
  "mediaResolution",
  "enableEnhancedCivicAnswers",
  "thinkingConfig",
  "speechConfig",
  "imageConfig",
  "audioTimestamp",
  "enableAffectiveDialog",
  "routingConfig",
  "modelSelectionConfig",
  "translationConfig",
);

const requestParameters = parameters(
  "model",
  "safetySettings",
  "labels",
  "serviceTier",
  "store",
  "routingConfig",
  "modelSelectionConfig",
  "audioTimestamp",
  "modelArmorConfig",
  "generationOutputConfig",
);

/** Which schema member a body set first, so that setting both is refused. */
function schemaMember(openApi: boolean): Rule {
  return capture((call, value, path) => {
    if (value === undefined || value === null) return;
    const schema = openApi ? optionalObject(value, path) : value;
    if (call.responseSchema !== undefined) {
      const jsonPath = path.replace(/responseSchema$|response_schema$/, "responseJsonSchema");
      throw invalidRequest(`'${jsonPath}' and '${path}' must not both be set.`, jsonPath);
    }
    call.responseSchema = schema;
  });
}

/** Inline bytes: binary media is a media part, anything else counts as the text it decodes to. */
const blob: Rule = (value, path, walk) => {
  if (value === undefined || value === null) return;
  message({ mimeType: mediaType, data: skip, displayName: text })(value, path, walk);
  const fields = value as Record<string, unknown>;
  const type = optionalString(fields.mimeType ?? fields.mime_type, `${path}.mimeType`);
  countInlineData(walk, `${path}.data`, type, fields.data);
};

/** A file the provider holds: binary media is a media part; anything else the gateway cannot measure. */
const fileData: Rule = (value, path, walk) => {
  if (value === undefined || value === null) return;
  message({ mimeType: mediaType, fileUri: skip, displayName: text })(value, path, walk);
  const fields = value as Record<string, unknown>;
  const type = optionalString(fields.mimeType ?? fields.mime_type, `${path}.mimeType`);
  if (isBinaryMedia(type)) walk.call.mediaParts++;
  else walk.call.unmeasured.push({ path, what: "a file the provider holds that may be text" });
};

const mediaMembers = { inlineData: blob, fileData, mediaProcessing: skip };

const part = message({
  text,
  ...mediaMembers,
  functionCall: message({ id: counted, name: text, args: json, partialArgs: json, willContinue: skip }),
  functionResponse: message({
    id: counted,
    name: text,
    response: json,
    parts: arrayOf(message(mediaMembers)),
    scheduling: skip,
    willContinue: skip,
  }),
  executableCode: message({ id: counted, language: vocabulary("LANGUAGE_UNSPECIFIED", "PYTHON"), code: text }),
  codeExecutionResult: message({
    id: counted,
    outcome: vocabulary("OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"),
    output: text,
  }),
  toolCall: message({ id: counted, toolType: counted, args: json }),
  toolResponse: message({ id: counted, toolType: counted, response: json }),
  speechMetadata: message({ speaker: text, style: text }),
  audioTranscription: counted,
  partMetadata: counted,
  thought: skip,
  thoughtSignature: counted,
  videoMetadata: skip,
  mediaResolution: skip,
});

/** A content: a role and its parts. */
export const content = message({ role: vocabulary("user", "model"), parts: required(arrayOf(part), "an array") });

/** A tool's members, read for unknown ones only: a tool counts whole as compact JSON. */
const toolShape = shape(
  message({
    functionDeclarations: arrayOf(
      message(
        parameters(
          "name",
          "description",
          "parameters",
          "parametersJsonSchema",
          "response",
          "responseJsonSchema",
          "behavior",
        ),
      ),
    ),
    ...parameters(
      "googleSearch",
      "googleSearchRetrieval",
      "codeExecution",
      "urlContext",
      "fileSearch",
      "computerUse",
      "googleMaps",
      "retrieval",
      "enterpriseWebSearch",
      "mcpServers",
    ),
  }),
);

/** The members of a generateContent body; a countTokens `generateContentRequest` and a cache create share them. */
export const generateContentMembers = {
  contents: required(arrayOf(content), "an array"),
  systemInstruction: section("system", textOr(content)),
  tools: section("tools", arrayOf(both(json, toolShape))),
  toolConfig: message({
    functionCallingConfig: message({
      mode: skip,
      allowedFunctionNames: counted,
      streamFunctionCallArguments: skip,
    }),
    retrievalConfig: skip,
    includeServerSideToolInvocations: skip,
  }),
  cachedContent: capture((call, value, path) => {
    const name = optionalString(value, path);
    if (name !== undefined) call.cachedPrefix = { kind: "cached-content", id: name };
  }),
  generationConfig: message({
    responseJsonSchema: schemaMember(false),
    responseSchema: schemaMember(true),
    responseFormat: counted,
    audioTranscriptionConfig: counted,
    ...generationParameters,
  }),
  continuationToken: counted,
  ...requestParameters,
};

/** A generateContent body. */
export const generateContentBody = message(generateContentMembers);

/** The provider refuses these beside a cache; refusing first keeps the window's count exact. */
export function refuseBesideCache(call: LogicalCall, body: Record<string, unknown>, at = ""): void {
  if (call.cachedPrefix === undefined) return;
  for (const name of ["systemInstruction", "tools", "toolConfig"]) {
    const present = [name, snakeCase(name)].some((key) => body[key] !== undefined && body[key] !== null);
    if (present) throw invalidRequest(`'${at}cachedContent' cannot be combined with '${at}${name}'.`, `${at}${name}`);
  }
}
