import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { asArray, asObject, asString } from "../../wire-fields.js";
import { isSet } from "./is-set.js";

/** Chat Completions `tools` and `tool_choice` as Gemini function declarations and `toolConfig`. */

/** `tools` and `toolConfig` from `tools` and `tool_choice`; none without function tools. */
export function toolMembers(body: JsonObject): JsonObject {
  const tools = isSet(body.tools) ? asArray(body.tools, "tools") : [];
  let declarations = tools.map((value, i) => functionDeclaration(asObject(value, `tools[${i}]`), `tools[${i}]`));
  const choice = isSet(body.tool_choice) ? functionCallingConfig(body.tool_choice) : undefined;
  if (choice?.only !== undefined) {
    const only = new Set(choice.only);
    declarations = declarations.filter((declaration) => only.has(declaration.name as string));
  }
  if (declarations.length === 0) return {};
  const members: JsonObject = { tools: [{ functionDeclarations: declarations }] };
  if (choice !== undefined) members.toolConfig = { functionCallingConfig: choice.config };
  return members;
}

/** A function tool as a function declaration; its parameters go whole as `parametersJsonSchema`. */
function functionDeclaration(tool: JsonObject, path: string): JsonObject {
  if (tool.type !== "function") {
    throw invalidRequest(`'${path}.type' must be "function"; Gemini takes function tools only.`, `${path}.type`);
  }
  const fn = asObject(tool.function, `${path}.function`);
  const declaration: JsonObject = { name: asString(fn.name, `${path}.function.name`) };
  if (isSet(fn.description)) declaration.description = asString(fn.description, `${path}.function.description`);
  if (isSet(fn.parameters)) declaration.parametersJsonSchema = fn.parameters;
  return declaration;
}

const toolChoiceModes = new Map([
  ["auto", "AUTO"],
  ["none", "NONE"],
  ["required", "ANY"],
]);

/**
 * `toolConfig.functionCallingConfig` for a tool choice. `only` lists the tools an `allowed_tools`
 * choice in mode auto keeps: Gemini restricts names only in mode ANY, so the others are not declared.
 */
function functionCallingConfig(choice: unknown): { config: JsonObject; only?: string[] } {
  if (typeof choice === "string") {
    const mode = toolChoiceModes.get(choice);
    if (mode === undefined)
      throw invalidRequest("'tool_choice' must be auto, none, required or a named tool.", "tool_choice");
    return { config: { mode } };
  }
  const named = asObject(choice, "tool_choice");
  if (named.type === "function") {
    const fn = asObject(named.function, "tool_choice.function");
    return { config: { mode: "ANY", allowedFunctionNames: [asString(fn.name, "tool_choice.function.name")] } };
  }
  if (named.type === "allowed_tools") {
    const allowed = asObject(named.allowed_tools, "tool_choice.allowed_tools");
    const names = asArray(allowed.tools, "tool_choice.allowed_tools.tools").map((value, i) => {
      const at = `tool_choice.allowed_tools.tools[${i}]`;
      const tool = asObject(value, at);
      if (tool.type !== "function") throw invalidRequest(`'${at}.type' must be "function".`, `${at}.type`);
      return asString(asObject(tool.function, `${at}.function`).name, `${at}.function.name`);
    });
    if (allowed.mode === "required") return { config: { mode: "ANY", allowedFunctionNames: names } };
    if (allowed.mode === "auto") return { config: { mode: "AUTO" }, only: names };
    throw invalidRequest(
      "'tool_choice.allowed_tools.mode' must be auto or required.",
      "tool_choice.allowed_tools.mode",
    );
  }
  throw invalidRequest(
    `'tool_choice.type' must be "function" or "allowed_tools"; Gemini takes function tools only.`,
    "tool_choice.type",
  );
}
