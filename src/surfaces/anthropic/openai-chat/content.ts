/**
 * A Chat Completions message's content as Anthropic content blocks: text, images (`image_url`)
 * and documents (`file`), with explicit cache breakpoints kept.
 */

import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { base64Text, dataUrlParts } from "../../media.js";
import { asArray, asObject, asString, optionalString } from "../../wire-fields.js";
import { noCounterpart } from "./no-counterpart.js";

/** Marks a block as the end of a cached prefix when the part carried an explicit breakpoint. */
function withBreakpoint(block: JsonObject, part: JsonObject): JsonObject {
  return part.prompt_cache_breakpoint == null ? block : { ...block, cache_control: { type: "ephemeral" } };
}

/** A base64 data URL's media type and data; undefined when the URL is not a data URL. */
function dataUrl(url: string, path: string): { mediaType: string; data: string } | undefined {
  const parts = dataUrlParts(url);
  if (parts === undefined) return undefined;
  const mediaType = (parts.type ?? "").trim().toLowerCase();
  if (!parts.hasData || mediaType === "" || !parts.base64) {
    throw invalidRequest(`'${path}' must be a base64 data URL with a media type.`, path);
  }
  return { mediaType, data: parts.data };
}

/** An `image_url` part as an image block: inline (base64) from a data URL, else by URL. */
function imageBlock(part: JsonObject, path: string): JsonObject {
  const urlPath = `${path}.image_url.url`;
  const url = asString(asObject(part.image_url, `${path}.image_url`).url, urlPath);
  const inline = dataUrl(url, urlPath);
  if (inline) return { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } };
  if (!/^https?:\/\//i.test(url)) throw invalidRequest(`'${urlPath}' must be a data URL or an http(s) URL.`, urlPath);
  return { type: "image", source: { type: "url", url } };
}

/**
 * A `file` part as a document block: a PDF inline (a data URL, or bare base64 named `*.pdf`) or by
 * URL, or plain text inline. A stored file (`file_id`) and other media have no counterpart.
 */
function documentBlock(part: JsonObject, path: string): JsonObject {
  const file = asObject(part.file, `${path}.file`);
  if (file.file_id != null) throw noCounterpart(`${path}.file.file_id`);
  const filename = optionalString(file.filename, `${path}.file.filename`);
  const titled = (source: JsonObject): JsonObject =>
    filename === undefined ? { type: "document", source } : { type: "document", source, title: filename };
  const dataPath = `${path}.file.file_data`;
  const fileData = optionalString(file.file_data, dataPath);
  if (fileData !== undefined) {
    const inline = dataUrl(fileData, dataPath) ?? {
      mediaType: filename?.toLowerCase().endsWith(".pdf") ? "application/pdf" : "",
      data: fileData,
    };
    if (inline.mediaType === "application/pdf") {
      return titled({ type: "base64", media_type: "application/pdf", data: inline.data });
    }
    const text = inline.mediaType === "text/plain" ? base64Text(inline.data) : undefined;
    if (text === undefined) throw noCounterpart(dataPath);
    return titled({ type: "text", media_type: "text/plain", data: text });
  }
  const fileUrl = optionalString(file.file_url, `${path}.file.file_url`);
  if (fileUrl !== undefined) return titled({ type: "url", url: fileUrl });
  throw invalidRequest(`'${path}.file' must carry 'file_data' or 'file_url'.`, `${path}.file`);
}

/**
 * A message's content as Anthropic blocks: a string is one text block; parts map one to one
 * (empty text is left out: Anthropic refuses empty text blocks). `image_url.detail` is a hint
 * without a counterpart and is not sent. `kinds` lists the part types the role may carry.
 */
export function contentBlocks(content: unknown, path: string, kinds: ReadonlySet<string>): JsonObject[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const blocks: JsonObject[] = [];
  asArray(content, `${path}.content`).forEach((value, index) => {
    const partPath = `${path}.content[${index}]`;
    const part = asObject(value, partPath);
    const type = asString(part.type, `${partPath}.type`);
    if (type === "input_audio") throw noCounterpart(`${partPath}.input_audio`);
    if (!kinds.has(type)) throw noCounterpart(`${partPath}.type`);
    let block: JsonObject;
    if (type === "text" || type === "refusal") {
      const text = asString(part[type], `${partPath}.${type}`);
      if (text === "") return;
      block = { type: "text", text };
    } else if (type === "image_url") block = imageBlock(part, partPath);
    else block = documentBlock(part, partPath);
    blocks.push(withBreakpoint(block, part));
  });
  return blocks;
}

/** The part types each role may carry: text only (system, developer, tool), user, assistant. */
export const textKinds = new Set(["text"]);
export const userKinds = new Set(["text", "image_url", "file"]);
export const assistantKinds = new Set(["text", "refusal"]);
