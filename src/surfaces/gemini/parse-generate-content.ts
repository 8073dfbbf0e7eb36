import { invalidRequest } from "../../errors/gateway-error.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import {
  asArray,
  asObject,
  type JsonObject,
  optionalArray,
  optionalObject,
  optionalString,
  textOf,
} from "../wire-fields.js";
import { geminiMember } from "./gemini-member.js";

const mediaParts = ["inlineData", "fileData"];
const structuredParts: Record<string, string> = { functionCall: "args", functionResponse: "response" };

/** Parses a generateContent / streamGenerateContent body into its logical call. */
export function parseGenerateContent(
  body: JsonObject,
  model: string | undefined,
  stream: boolean,
  pathPrefix = "",
): LogicalCall {
  const call = emptyCall();
  call.model = model;
  call.stream = stream;
  const at = pathPrefix;
  asArray(body.contents, `${at}contents`).forEach((value, index) => {
    readContent(call, value, `${at}contents[${index}]`, call.messages);
  });
  const system = geminiMember(body, "systemInstruction", at);
  if (typeof system === "string") call.system.push(system);
  else if (system !== undefined && system !== null) readContent(call, system, `${at}systemInstruction`, call.system);
  call.tools.push(...(optionalArray(body.tools, `${at}tools`) ?? []));
  const cached = optionalString(geminiMember(body, "cachedContent", at), `${at}cachedContent`);
  if (cached !== undefined) {
    // The provider refuses these beside a cache; refusing first keeps the window's count exact.
    for (const name of ["systemInstruction", "tools", "toolConfig"]) {
      if (geminiMember(body, name, at) !== undefined) {
        throw invalidRequest(`'${at}cachedContent' cannot be combined with '${at}${name}'.`, `${at}${name}`);
      }
    }
    call.cachedPrefix = { kind: "cached-content", id: cached };
  }
  const config = optionalObject(geminiMember(body, "generationConfig", at), `${at}generationConfig`);
  if (config !== undefined) {
    const configPath = `${at}generationConfig.`;
    const jsonSchema = geminiMember(config, "responseJsonSchema", configPath);
    const openApiSchema = optionalObject(
      geminiMember(config, "responseSchema", configPath),
      `${configPath}responseSchema`,
    );
    if (jsonSchema !== undefined && openApiSchema !== undefined) {
      throw invalidRequest(
        `'${configPath}responseJsonSchema' and '${configPath}responseSchema' must not both be set.`,
        `${configPath}responseJsonSchema`,
      );
    }
    call.responseSchema = jsonSchema ?? openApiSchema;
  }
  return call;
}

function readContent(call: LogicalCall, value: unknown, path: string, texts: string[]): void {
  const content = asObject(value, path);
  asArray(content.parts, `${path}.parts`).forEach((partValue, index) => {
    const partPath = `${path}.parts[${index}]`;
    readPart(call, asObject(partValue, partPath), partPath, texts);
  });
}

function readPart(call: LogicalCall, part: JsonObject, path: string, texts: string[]): void {
  const text = optionalString(part.text, `${path}.text`);
  if (text !== undefined) {
    texts.push(text);
    return;
  }
  for (const name of mediaParts) {
    if (geminiMember(part, name, `${path}.`) !== undefined) {
      call.mediaParts++;
      return;
    }
  }
  for (const [name, payload] of Object.entries(structuredParts)) {
    const invocation = geminiMember(part, name, `${path}.`);
    if (invocation !== undefined) {
      const fields = asObject(invocation, `${path}.${name}`);
      texts.push(optionalString(fields.name, `${path}.${name}.name`) ?? "", textOf(fields[payload] ?? {}));
      call.mediaParts += optionalArray(fields.parts, `${path}.${name}.parts`)?.length ?? 0;
      return;
    }
  }
  const code = optionalObject(geminiMember(part, "executableCode", `${path}.`), `${path}.executableCode`);
  if (code !== undefined) texts.push(textOf(code.code ?? ""));
  const result = optionalObject(geminiMember(part, "codeExecutionResult", `${path}.`), `${path}.codeExecutionResult`);
  if (result !== undefined) texts.push(textOf(result.output ?? ""));
  if (code === undefined && result === undefined) readUnknownPart(part, texts);
}

/** An unknown part counts as compact JSON, without the opaque thought signature and flag. */
function readUnknownPart(part: JsonObject, texts: string[]): void {
  const { thoughtSignature: _signature, thought_signature: _snakeSignature, thought: _thought, ...rest } = part;
  if (Object.keys(rest).length > 0) texts.push(textOf(rest));
}
