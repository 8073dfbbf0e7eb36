import { isObject, type JsonObject } from "../../json/json-object.js";
import { cutText } from "../../json/member-path.js";
import type { Tape } from "../../json/tape.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { countMediaUrl } from "../media.js";
import { asObject, optionalString } from "../wire-fields.js";
import {
  arrayOf,
  both,
  capture,
  counted,
  countOther,
  json,
  model,
  object,
  objectsOnly,
  parameters,
  type Rule,
  readBody,
  readTape,
  required,
  responseSchema,
  section,
  shape,
  skip,
  stream,
  tagged,
  text,
  textOr,
  unmeasured,
  vocabulary,
} from "../wire-rules.js";
import { fileInput } from "./file-input.js";

/**
 * What the model reads of a Responses create body. Not counted: the parameters below and the
 * values of the closed vocabularies; text as text; tools and the schema as compact JSON; items of
 * the kinds without a finer reading below as their whole compact JSON; every other field, known
 * (ids) or not, as the compact JSON of its key and value.
 */
const notModelVisible = parameters(
  "background",
  "context_management",
  "include",
  "max_output_tokens",
  "max_tool_calls",
  "metadata",
  "moderation",
  "multi_agent",
  "parallel_tool_calls",
  "personality",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
  "safety_identifier",
  "service_tier",
  "store",
  "stream_options",
  "temperature",
  "top_logprobs",
  "top_p",
  "truncation",
  "user",
);

/** Item kinds counted as their whole compact JSON: tool calls and outputs replayed from earlier turns. */
const wholeItems = [
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "web_search_call",
  "tool_search_call",
  "tool_search_output",
  "additional_tools",
  "image_generation_call",
  "code_interpreter_call",
  "local_shell_call",
  "local_shell_call_output",
  "shell_call",
  "shell_call_output",
  "apply_patch_call",
  "apply_patch_call_output",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call",
  "compaction_trigger",
  "program",
  "program_output",
  "agent_message",
  "multi_agent_call",
  "multi_agent_call_output",
];

const status = vocabulary("in_progress", "completed", "incomplete", "failed", "searching", "cancelled");
const breakpoint = { prompt_cache_breakpoint: skip };

/** An image the provider holds: it is still an image, one media part. */
const storedImage: Rule = (value, _path, walk) => {
  if (value !== undefined && value !== null) walk.call.mediaParts++;
};

const part = tagged("type", {
  input_text: { text: required(text, "a string"), ...breakpoint },
  output_text: { text: required(text, "a string"), annotations: counted, logprobs: skip },
  reasoning_text: { text: required(text, "a string") },
  summary_text: { text: required(text, "a string") },
  refusal: { refusal: required(text, "a string") },
  input_image: {
    image_url: (value, path, walk) => countMediaUrl(walk, path, value, "image"),
    file_id: storedImage,
    detail: vocabulary("auto", "low", "high", "original"),
    ...breakpoint,
  },
  input_file: fileInput({ type: skip, detail: vocabulary("auto", "low", "high"), ...breakpoint }),
  input_audio: {
    input_audio: object({ data: storedImage, format: vocabulary("wav", "mp3") }),
    ...breakpoint,
  },
});

const content = textOr(arrayOf(part));
const ids = { id: counted, call_id: counted, caller: counted, status };

const messageMembers = {
  type: skip,
  content: required(content, "a string or an array"),
  id: counted,
  status,
  phase: vocabulary("commentary", "final_answer"),
};
const systemMessage = section("system", object({ role: skip, ...messageMembers }));
const message = tagged("role", {
  system: systemMessage,
  developer: systemMessage,
  user: object({ role: skip, ...messageMembers }),
  assistant: object({ role: skip, ...messageMembers }),
});
const itemReference = object({ type: skip, id: required(unmeasured("a stored item"), "a string") });

/** An item without a type: a message, or an item reference when it has only an id. */
const untyped: Rule = (value, path, walk, key) => {
  const item = asObject(value, path);
  if (item.role === undefined && item.id !== undefined) itemReference(item, path, walk, key);
  else message(item, path, walk, key);
};

const item = tagged(
  "type",
  {
    "": untyped,
    message,
    item_reference: itemReference,
    function_call: { ...ids, name: required(text, "a string"), namespace: text, arguments: json },
    custom_tool_call: { ...ids, name: required(text, "a string"), namespace: text, input: json },
    function_call_output: { ...ids, output: content },
    custom_tool_call_output: { ...ids, output: content },
    reasoning: { ...ids, summary: arrayOf(part), content: arrayOf(part), encrypted_content: counted },
    compaction: { ...ids, encrypted_content: counted },
    ...Object.fromEntries(wholeItems.map((kind) => [kind, section("messages", json)])),
  },
  "",
);

const items = arrayOf(item);

/** Built-in tools, whose many settings the provider checks: known by their type, accepted as they come. */
const builtInTools = [
  "file_search",
  "computer",
  "computer_use_preview",
  "web_search",
  "web_search_2025_08_26",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "mcp",
  "code_interpreter",
  "programmatic_tool_calling",
  "image_generation",
  "local_shell",
  "shell",
  "namespace",
  "tool_search",
  "apply_patch",
];

/** The members of a tool declaration, which counts whole as compact JSON: read for unknown members only. */
const toolShape = shape(
  tagged("type", {
    function: parameters(
      "name",
      "description",
      "parameters",
      "strict",
      "output_schema",
      "defer_loading",
      "allowed_callers",
    ),
    custom: parameters("name", "description", "format", "defer_loading", "allowed_callers"),
    ...Object.fromEntries(builtInTools.map((type) => [type, skip])),
  }),
);

/** A named tool choice's members, read for unknown ones only: it counts whole as other. */
const namedToolChoice = shape(
  tagged("type", {
    allowed_tools: parameters("mode", "tools"),
    function: parameters("name"),
    custom: parameters("name"),
    mcp: parameters("server_label", "name"),
    ...Object.fromEntries(builtInTools.map((type) => [type, {}])),
    computer_use: {},
  }),
);

/** Tools whose tool lists or skills the provider expands into the prompt itself. */
const providerExpanded: Rule = (value, path, walk) => {
  if (!isObject(value)) return;
  if (value.type === "mcp") walk.call.unmeasured.push({ path, what: "an MCP server whose tools the provider lists" });
  const environment = isObject(value.environment) ? value.environment : undefined;
  const skills = Array.isArray(environment?.skills) ? environment.skills : [];
  if (skills.some((skill) => isObject(skill) && skill.type === "skill_reference")) {
    walk.call.unmeasured.push({ path, what: "skills the provider expands" });
  }
};

const textFormat = tagged("type", {
  text: {},
  json_object: {},
  json_schema: section(
    "schema",
    object({ type: skip, name: text, description: text, schema: responseSchema, strict: skip }),
  ),
});

/** A map whose keys count as other and whose values `value` reads (prompt template variables). */
function map(value: Rule): Rule {
  return (fields, path, walk) => {
    if (fields === undefined || fields === null) return;
    for (const [name, member] of Object.entries(asObject(fields, path))) {
      const at = `${path}[${JSON.stringify(cutText(name, 64))}]`;
      countOther(walk, at, name, undefined, false);
      value(member, at, walk);
    }
  };
}

const responseCreate = object({
  model,
  stream,
  instructions: section("system", textOr(items)),
  input: textOr(items),
  tools: section("tools", arrayOf(both(json, both(toolShape, providerExpanded)))),
  tool_choice: both(vocabulary("none", "auto", "required"), objectsOnly(namedToolChoice)),
  text: object({ format: textFormat, verbosity: skip }),
  reasoning: object(parameters("effort", "summary", "generate_summary", "context", "mode")),
  previous_response_id: capture((call, value, path) => {
    const id = optionalString(value, path);
    if (id !== undefined) call.cachedPrefix = { kind: "previous-response", id };
  }),
  conversation: unmeasured("a stored conversation"),
  prompt: object({
    id: unmeasured("a stored prompt template"),
    version: skip,
    variables: map(textOr(part)),
  }),
  ...notModelVisible,
});

/** Parses a Responses API create body into its logical call. */
export function parseResponseCreate(body: JsonObject): LogicalCall {
  return readBody(responseCreate, body, emptyCall());
}

/** Reads a Responses API create body from its tape, as `parseResponseCreate` reads it parsed. */
export function readResponseCreateTape(tape: Tape): LogicalCall {
  return readTape(responseCreate, tape, emptyCall());
}
