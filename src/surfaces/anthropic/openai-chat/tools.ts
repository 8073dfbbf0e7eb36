/** Chat Completions function tools and `tool_choice` as Anthropic tools and `tool_choice`. */

import { invalidRequest } from "../../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import { asObject, asString, optionalObject, optionalString } from "../../wire-fields.js";
import { noCounterpart } from "./no-counterpart.js";

/** The function tools as Anthropic tools; other tool types have no counterpart. */
export function toolsOf(tools: unknown[]): JsonObject[] {
  return tools.map((value, index) => {
    const path = `tools[${index}]`;
    const tool = asObject(value, path);
    if (tool.type !== "function") throw noCounterpart(`${path}.type`);
    const fn = asObject(tool.function, `${path}.function`);
    const description = optionalString(fn.description, `${path}.function.description`);
    return {
      name: asString(fn.name, `${path}.function.name`),
      ...(description === undefined ? {} : { description }),
      input_schema: optionalObject(fn.parameters, `${path}.function.parameters`) ?? { type: "object" },
      ...(fn.strict === true ? { strict: true } : {}),
    };
  });
}

/** `tool_choice` (and `parallel_tool_calls: false`) as Anthropic's `tool_choice`; undefined when neither is set. */
export function toolChoiceOf(body: JsonObject, thinking: boolean): JsonObject | undefined {
  const choice = body.tool_choice;
  let native: JsonObject | undefined;
  if (choice === undefined || choice === null) native = undefined;
  else if (choice === "auto") native = { type: "auto" };
  else if (choice === "required") native = { type: "any" };
  else if (choice === "none") native = { type: "none" };
  else if (isObject(choice)) {
    if (choice.type !== "function") throw noCounterpart("tool_choice.type");
    const fn = asObject(choice.function, "tool_choice.function");
    native = { type: "tool", name: asString(fn.name, "tool_choice.function.name") };
  } else throw invalidRequest("'tool_choice' must be 'none', 'auto', 'required' or a named function.", "tool_choice");
  if (thinking && (native?.type === "any" || native?.type === "tool")) {
    throw invalidRequest(
      "'tool_choice' forces a tool call, which Anthropic does not allow while thinking is on; use 'auto' or a lower reasoning level. Nothing was sent.",
      "tool_choice",
    );
  }
  if (body.parallel_tool_calls !== false || body.tools == null || native?.type === "none") return native;
  return { ...(native ?? { type: "auto" }), disable_parallel_tool_use: true };
}
