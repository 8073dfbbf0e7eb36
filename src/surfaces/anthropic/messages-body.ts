import { invalidRequest } from "../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../json/json-object.js";
import type { Tape } from "../../json/tape.js";
import { memberValue } from "../../json/tape-values.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { countInlineData, mediaType } from "../media.js";
import { optionalString } from "../wire-fields.js";
import {
  arrayOf,
  both,
  counted,
  countOther,
  json,
  model,
  object,
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
} from "../wire-rules.js";

/**
 * What the model reads of a Messages (or count_tokens) body. Not counted: the parameters below
 * and the values of the closed vocabularies; text as text; tools and the schema as compact JSON;
 * server tool results as their whole compact JSON; every other field, known (ids) or not, as the
 * compact JSON of its key and value. Tools, then system, then messages are read in that order,
 * the order of Anthropic's cache prefix.
 */
const notModelVisible = parameters(
  "max_tokens",
  "metadata",
  "service_tier",
  "stop_sequences",
  "temperature",
  "top_k",
  "top_p",
  "thinking",
  "inference_geo",
  "speed",
  "diagnostics",
  "billing_policy",
  "fallbacks",
  "fallback_credit_token",
);

/**
 * A cache breakpoint (`cache_control`): everything read so far, in the order tools, system,
 * messages, is the request's cached prefix.
 */
const breakpoint: Rule = (value, _path, walk) => {
  if (value === undefined || value === null) return;
  const call = walk.call;
  call.inlinePrefix = {
    tools: call.tools.length,
    system: call.system.length,
    messages: call.messages.length,
    other: call.other.length,
  };
};

/** A block or tool that may carry a breakpoint: read whole first, so that it is inside its own prefix. */
function cached(rule: Rule): Rule {
  return (value, path, walk, key) => {
    rule(value, path, walk, key);
    if (isObject(value)) breakpoint(value.cache_control, path, walk);
  };
}

/** An image, from any source, is one media part. */
const image: Rule = (value, path, walk) => {
  if (value === undefined || value === null) return;
  object({ type: skip, media_type: mediaType, data: skip, url: skip, file_id: skip })(value, path, walk);
  walk.call.mediaParts++;
};

const textBlock = { text: required(text, "a string"), citations: counted, cache_control: skip };

/** Base64 data: a PDF is one media part, anything else counts as the text it decodes to. */
const base64Source: Rule = (value, path, walk) => {
  object({ type: skip, media_type: mediaType, data: skip })(value, path, walk);
  const source = value as JsonObject;
  countInlineData(walk, `${path}.data`, optionalString(source.media_type, `${path}.media_type`), source.data);
};

/** A PDF the provider fetches by URL (the only kind a URL document may be): one media part. */
const pdfByUrl: Rule = (value, _path, walk) => {
  if (value !== undefined && value !== null) walk.call.mediaParts++;
};

/** A document's source: inline text or blocks count as text; a PDF (inline or by URL) is media; a file the gateway cannot measure. */
const documentSource = tagged("type", {
  base64: base64Source,
  text: { media_type: mediaType, data: required(text, "a string") },
  content: {
    content: textOr(
      arrayOf(cached(tagged("type", { text: textBlock, image: { source: image, cache_control: skip } }))),
    ),
  },
  url: { url: pdfByUrl },
  file: { file_id: unmeasured("a stored file") },
});

/** Server tool results and calls replayed from earlier turns: their whole compact JSON. */
const wholeBlocks = [
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "advisor_tool_result",
  "compaction",
  "tool_addition",
  "tool_removal",
  "mcp_tool_listing",
  "fallback",
  "tool_reference",
  "browser_state",
];

const block: Rule = cached(
  tagged("type", {
    text: textBlock,
    image: { source: image, transformations: skip, cache_control: skip },
    document: {
      source: required(documentSource, "an object"),
      title: text,
      context: text,
      citations: skip,
      cache_control: skip,
    },
    search_result: {
      source: text,
      title: text,
      content: arrayOf(cached(tagged("type", { text: textBlock }))),
      citations: skip,
      cache_control: skip,
    },
    thinking: { thinking: required(text, "a string"), signature: counted },
    redacted_thinking: { data: counted },
    tool_use: {
      id: counted,
      name: required(text, "a string"),
      input: json,
      caller: counted,
      toolset_name: counted,
      cache_control: skip,
    },
    server_tool_use: {
      id: counted,
      name: required(text, "a string"),
      input: json,
      caller: counted,
      cache_control: skip,
    },
    tool_result: {
      tool_use_id: counted,
      content: textOr(arrayOf((value, path, walk, key) => block(value, path, walk, key))),
      is_error: skip,
      toolset_name: counted,
      cache_control: skip,
    },
    container_upload: {
      file_id: unmeasured("a file uploaded to the code execution container"),
      cache_control: skip,
    },
    ...Object.fromEntries(wholeBlocks.map((kind) => [kind, json])),
  }),
);

const content = textOr(arrayOf(block));
const messageMembers = { content: required(content, "a string or an array") };

/** Server and Anthropic-defined tools, by the prefix of their versioned type, accepted as they come. */
const builtInTool =
  /^(?:bash|code_execution|memory|text_editor|web_search|web_fetch|tool_search_tool|computer|browser_toolset|computer_toolset|advisor)(?:_\w+)?$|^mcp_toolset$/;

/** A custom tool's members, read for unknown ones only: a tool counts whole as compact JSON. */
const customTool = object(
  parameters(
    "type",
    "name",
    "description",
    "input_schema",
    "input_examples",
    "cache_control",
    "allowed_callers",
    "defer_loading",
    "strict",
    "eager_input_streaming",
  ),
);

const toolShape = shape((value, path, walk, key) => {
  const type = isObject(value) ? value.type : undefined;
  if (typeof type === "string" && type !== "custom") {
    if (!builtInTool.test(type)) countOther(walk, path, key, value, true);
  } else customTool(value, path, walk, key);
});

/** A tool declaration, counted whole; its breakpoint marks the tools up to it as cached. */
const tool: Rule = cached(both(json, toolShape));

const outputFormat = tagged("type", { json_schema: section("schema", object({ type: skip, schema: responseSchema })) });

/** Container skills are expanded by the provider. */
const container: Rule = (value, path, walk) => {
  if (value === undefined || value === null || typeof value === "string") return;
  object({ id: skip, skills: arrayOf(unmeasured("a skill the provider expands")) })(value, path, walk);
};

const messages = object(
  {
    model,
    stream,
    tools: section("tools", arrayOf(tool)),
    system: section("system", textOr(arrayOf(cached(tagged("type", { text: textBlock }))))),
    messages: required(
      arrayOf(
        tagged("role", {
          user: messageMembers,
          assistant: messageMembers,
          system: section("system", object({ role: skip, ...messageMembers, clear_at: skip, output_config: skip })),
        }),
      ),
      "an array",
    ),
    // A top-level breakpoint marks the last block: everything up to here.
    cache_control: breakpoint,
    tool_choice: tagged("type", {
      auto: { disable_parallel_tool_use: skip },
      any: { disable_parallel_tool_use: skip },
      none: {},
      tool: { name: counted, disable_parallel_tool_use: skip },
    }),
    output_config: object({ format: outputFormat, effort: skip }),
    output_format: outputFormat,
    mcp_servers: section("tools", arrayOf(both(json, unmeasured("an MCP server whose tools the provider lists")))),
    container,
    thread: tagged("type", { create: {}, continue: { previous_message_id: unmeasured("a stored conversation") } }),
    compaction: counted,
    context_management: counted,
    ...notModelVisible,
  },
  { inOrder: true },
);

/** Parses a Messages (or count_tokens) body into its logical call. */
export function parseMessages(body: JsonObject): LogicalCall {
  refuseTwoFormats(body.output_config, body.output_format);
  return readBody(messages, body, emptyCall());
}

/** Reads a Messages (or count_tokens) body from its tape, as `parseMessages` reads it parsed. */
export function readMessagesTape(tape: Tape): LogicalCall {
  refuseTwoFormats(memberValue(tape, 0, "output_config"), memberValue(tape, 0, "output_format"));
  return readTape(messages, tape, emptyCall());
}

/** The two spellings of the output format are not taken together. */
function refuseTwoFormats(config: unknown, format: unknown): void {
  if (isObject(config) && config.format != null && format != null) {
    throw invalidRequest("'output_config.format' and 'output_format' must not both be set.", "output_format");
  }
}
