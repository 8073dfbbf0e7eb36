import { type GatewayError, invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { asArray, asObject, asString } from "../../wire-fields.js";
import { isSet } from "./is-set.js";
import { filePart, mediaPart } from "./media.js";

/**
 * A Chat Completions message's content parts as Gemini parts: reading content (a string or an
 * array of parts), text parts, and a user message's text, image, audio and file parts; a part type
 * the role cannot carry is refused.
 */

/** A message's content as parts with their paths: a string is one text part; absent or null is none. */
export function contentParts(content: unknown, path: string): [JsonObject, string][] {
  if (!isSet(content)) return [];
  if (typeof content === "string") return [[{ type: "text", text: content }, path]];
  return asArray(content, path).map((part, j): [JsonObject, string] => {
    const at = `${path}[${j}]`;
    return [asObject(part, at), at];
  });
}

/** The refusal of a content part type the role cannot carry to Gemini. */
export function unsupportedPart(path: string, allowed: string): GatewayError {
  return invalidRequest(
    `'${path}.type' must be ${allowed} here; other parts are not translated to Gemini.`,
    `${path}.type`,
  );
}

/** A text part (a string content is read as one). */
export function textPart(part: JsonObject, path: string): JsonObject {
  if (part.type !== "text") throw unsupportedPart(path, '"text"');
  return { text: asString(part.text, `${path}.text`) };
}

/** Gemini refuses empty text parts; an empty string says nothing, so it is left out. */
export const hasText = (part: JsonObject) => part.text !== "";

/** A user message's parts: text, images, audio and files. */
export function userParts(content: unknown, path: string): JsonObject[] {
  return contentParts(content, path)
    .map(([part, at]) => {
      switch (part.type) {
        case "text":
          return textPart(part, at);
        case "image_url": {
          const image = asObject(part.image_url, `${at}.image_url`);
          return mediaPart(asString(image.url, `${at}.image_url.url`), `${at}.image_url.url`, undefined);
        }
        case "input_audio": {
          const audio = asObject(part.input_audio, `${at}.input_audio`);
          const data = asString(audio.data, `${at}.input_audio.data`);
          const format = asString(audio.format, `${at}.input_audio.format`);
          return { inlineData: { mimeType: `audio/${format}`, data } };
        }
        case "file":
          return filePart(asObject(part.file, `${at}.file`), `${at}.file`);
        default:
          throw unsupportedPart(at, '"text", "image_url", "input_audio" or "file"');
      }
    })
    .filter(hasText);
}
