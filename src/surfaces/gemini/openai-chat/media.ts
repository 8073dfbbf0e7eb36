import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { dataUrlParts } from "../../media.js";
import { asString } from "../../wire-fields.js";
import { isSet } from "./is-set.js";

/**
 * Media of Chat Completions content parts (image URLs and files) as Gemini `inlineData` or
 * `fileData` parts, with the media type a data URL declares or a file name's extension names.
 */

/** A file part: inline data (a data URL, or base64 with a telling file name) or a URL; never a stored file id. */
export function filePart(file: JsonObject, path: string): JsonObject {
  if (isSet(file.file_id)) {
    throw invalidRequest(
      `'${path}.file_id' names a file stored with OpenAI, which Gemini cannot read; send the file inline as 'file_data'.`,
      `${path}.file_id`,
    );
  }
  const filename = typeof file.filename === "string" ? file.filename : undefined;
  if (isSet(file.file_data)) {
    const data = asString(file.file_data, `${path}.file_data`);
    if (data.startsWith("data:")) return mediaPart(data, `${path}.file_data`, filename);
    const mimeType = filename === undefined ? undefined : mediaTypeOfName(filename);
    if (mimeType === undefined) {
      throw invalidRequest(
        `'${path}.file_data' needs a media type for Gemini: send it as a data URL (data:<type>;base64,…) or with a filename whose extension names it.`,
        `${path}.file_data`,
      );
    }
    return { inlineData: { mimeType, data } };
  }
  if (isSet(file.file_url)) return mediaPart(asString(file.file_url, `${path}.file_url`), `${path}.file_url`, filename);
  throw invalidRequest(`'${path}' must carry 'file_data' or 'file_url'.`, path);
}

/** Media types Gemini reads, by file extension: only the obvious ones. */
const mediaTypesByExtension = new Map([
  ["png", "image/png"],
  ["jpg", "image/jpeg"],
  ["jpeg", "image/jpeg"],
  ["gif", "image/gif"],
  ["webp", "image/webp"],
  ["heic", "image/heic"],
  ["heif", "image/heif"],
  ["pdf", "application/pdf"],
  ["mp3", "audio/mp3"],
  ["wav", "audio/wav"],
  ["flac", "audio/flac"],
  ["ogg", "audio/ogg"],
  ["mp4", "video/mp4"],
  ["mov", "video/mov"],
  ["webm", "video/webm"],
  ["txt", "text/plain"],
  ["csv", "text/csv"],
  ["md", "text/markdown"],
  ["html", "text/html"],
  ["json", "application/json"],
]);

/** The media type a file name or URL path's extension names, if obvious. */
function mediaTypeOfName(name: string): string | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1];
  return extension === undefined ? undefined : mediaTypesByExtension.get(extension.toLowerCase());
}

/** A URL's path, without query and fragment (for its extension); the URL itself when it does not parse. */
function urlPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Base64 of text's UTF-8 bytes (works without Node's Buffer). */
function base64OfText(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Media by URL: a data URL becomes `inlineData` (its media type, else the file name's); any other URL
 * `fileData` with the media type its extension names, if any.
 */
export function mediaPart(url: string, path: string, filename: string | undefined): JsonObject {
  const parts = dataUrlParts(url);
  if (parts === undefined) {
    const mimeType = mediaTypeOfName(urlPath(url)) ?? (filename === undefined ? undefined : mediaTypeOfName(filename));
    return { fileData: mimeType === undefined ? { fileUri: url } : { fileUri: url, mimeType } };
  }
  const payload = parts.data;
  const mimeType = parts.type ?? (filename === undefined ? undefined : mediaTypeOfName(filename));
  if (mimeType === undefined) {
    throw invalidRequest(`'${path}' must be a data URL that names its media type (data:<type>;base64,…).`, path);
  }
  if (parts.base64) return { inlineData: { mimeType, data: payload } };
  let text: string;
  try {
    text = decodeURIComponent(payload);
  } catch {
    throw invalidRequest(`'${path}' must be a base64 or percent-encoded data URL.`, path);
  }
  return { inlineData: { mimeType, data: base64OfText(text) } };
}
