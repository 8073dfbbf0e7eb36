import type { JsonObject } from "../../../json/json-object.js";
import type { NativeRequest, TranslationContext } from "../../translation.js";
import { asArray } from "../../wire-fields.js";
import { generationConfigOf } from "./generation-config.js";
import { translateMessages } from "./messages.js";
import { refuseWithoutCounterpart } from "./refusals.js";
import { toolMembers } from "./tools.js";

/**
 * A Chat Completions request as a Gemini `generateContent` request (`streamGenerateContent` as SSE
 * when streamed): members without a counterpart are refused first, then messages, tools and
 * generation config are translated.
 */

export function geminiRequest(body: JsonObject, context: TranslationContext): NativeRequest {
  refuseWithoutCounterpart(body, context.droppable);
  const { systemParts, contents } = translateMessages(asArray(body.messages, "messages"), context);
  const native: JsonObject = { contents };
  if (systemParts.length > 0) native.systemInstruction = { parts: systemParts };
  Object.assign(native, toolMembers(body));
  const generationConfig = generationConfigOf(body, context);
  if (Object.keys(generationConfig).length > 0) native.generationConfig = generationConfig;
  const model = encodeURIComponent(context.upstreamModel);
  const path =
    body.stream === true
      ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
      : `/v1beta/models/${model}:generateContent`;
  return { path, body: native };
}
