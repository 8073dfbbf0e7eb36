import type { JsonObject } from "../../json/json-object.js";
import type { Tape } from "../../json/tape.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { countMediaUrl } from "../media.js";
import { asString } from "../wire-fields.js";
import {
  arrayOf,
  both,
  counted,
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
 * What the model reads of a Chat Completions body. Not counted: the parameters below and the
 * values of the closed vocabularies; text as text; tools and the schema as compact JSON; every
 * other field, known (ids) or not, as the compact JSON of its key and value.
 */
const notModelVisible = parameters(
  "audio",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "moderation",
  "n",
  "parallel_tool_calls",
  "presence_penalty",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
  "reasoning_effort",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream_options",
  "temperature",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
);

/** The members of a tool declaration, which counts whole as compact JSON: read for unknown members only. */
const toolShape = shape(
  tagged(
    "type",
    {
      function: { function: object(parameters("name", "description", "parameters", "strict")) },
      custom: { custom: object(parameters("name", "description", "format")) },
    },
    "function",
  ),
);

/** A named tool choice's members, read for unknown ones only: it counts whole as other. */
const namedToolChoice = shape(
  tagged("type", {
    function: { function: object(parameters("name")) },
    custom: { custom: object(parameters("name")) },
    allowed_tools: { allowed_tools: object(parameters("mode", "tools")) },
  }),
);

/** A tool choice: `none`, `auto`, `required` count 0; a named tool counts as other. */
const toolChoice = both(vocabulary("none", "auto", "required"), objectsOnly(namedToolChoice));

/** Binary data of a known media kind (audio): one media part. */
const binaryData: Rule = (value, path, walk) => {
  if (value === undefined || value === null) return;
  asString(value, path);
  walk.call.mediaParts++;
};

/** Marks where an explicit prompt cache ends; not model input. */
const breakpoint = { prompt_cache_breakpoint: skip };

const contentPart = tagged("type", {
  text: { text: required(text, "a string"), ...breakpoint },
  refusal: { refusal: required(text, "a string") },
  image_url: {
    image_url: object({
      url: (value, path, walk) => countMediaUrl(walk, path, value, "image"),
      detail: vocabulary("auto", "low", "high"),
    }),
    ...breakpoint,
  },
  input_audio: { input_audio: object({ data: binaryData, format: vocabulary("wav", "mp3") }), ...breakpoint },
  file: { file: fileInput(), ...breakpoint },
});

const content = textOr(arrayOf(contentPart));

/** A tool call as the model sees it: its name and its arguments (or input) as text. */
const toolCall = tagged(
  "type",
  {
    function: { id: counted, function: required(object({ name: text, arguments: json }), "an object") },
    custom: { id: counted, custom: required(object({ name: text, input: json }), "an object") },
  },
  "function",
);

const messageMembers = {
  content,
  name: text,
  refusal: text,
  tool_calls: arrayOf(toolCall),
  tool_call_id: counted,
  function_call: object({ name: text, arguments: json }),
  audio: object({ id: unmeasured("a stored audio answer") }),
};

const systemMessage = section("system", object({ role: skip, ...messageMembers }));

const message = tagged("role", {
  system: systemMessage,
  developer: systemMessage,
  user: messageMembers,
  assistant: messageMembers,
  tool: messageMembers,
  function: messageMembers,
});

const responseFormat = tagged("type", {
  text: {},
  json_object: {},
  json_schema: {
    json_schema: required(
      section("schema", object({ name: text, description: text, schema: responseSchema, strict: skip })),
      "an object",
    ),
  },
});

const chatCompletion = object({
  model,
  stream,
  messages: required(arrayOf(message), "an array"),
  tools: section("tools", arrayOf(both(json, toolShape))),
  functions: section("tools", arrayOf(both(json, shape(object(parameters("name", "description", "parameters")))))),
  tool_choice: toolChoice,
  function_call: toolChoice,
  response_format: responseFormat,
  prediction: tagged("type", { content: { content } }),
  web_search_options: counted,
  ...notModelVisible,
});

/** Parses a Chat Completions request body into its logical call. */
export function parseChatCompletion(body: JsonObject): LogicalCall {
  return readBody(chatCompletion, body, emptyCall());
}

/** Reads a Chat Completions body from its tape, as `parseChatCompletion` reads it parsed. */
export function readChatCompletionTape(tape: Tape): LogicalCall {
  return readTape(chatCompletion, tape, emptyCall());
}
