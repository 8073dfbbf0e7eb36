import { invalidRequest } from "../errors/gateway-error.js";
import type { CallText } from "../logical-call.js";
import { countOther, type Rule, type Walk } from "./wire-rules.js";

/** Binary media: the model sees them as images, sound, video or pages, counted as media parts. */
const binaryMedia = /^(?:image|audio|video)\/|^application\/pdf$/i;

/** What a media type looks like (`text/plain`, `application/ld+json`), without parameters. */
const mediaTypeForm = /^[A-Za-z0-9][\w.+-]{0,126}\/[A-Za-z0-9][\w.+-]{0,126}$/;

/** Whether a media type names binary media (image, audio, video, PDF) rather than something read as text. */
export function isBinaryMedia(mediaType: string | undefined): boolean {
  return mediaType !== undefined && binaryMedia.test(mediaType.trim());
}

/** A media type field: its value counts 0 when it has the form of a media type, else as other. */
export const mediaType: Rule = (value, path, walk, key) => {
  if (value === undefined || value === null) return;
  if (typeof value !== "string" || !mediaTypeForm.test(value)) countOther(walk, path, key, value, false);
};

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The UTF-8 text base64 (or base64url) data decodes to, or undefined when it is not both. */
export function base64Text(data: string): string | undefined {
  let binary: string;
  try {
    binary = atob(data.replace(/[-_]/g, (unit) => (unit === "-" ? "+" : "/")));
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Counts inline data the request carries: binary media is one media part; anything else (text,
 * JSON, XML, CSV, Markdown, or no type at all) counts as the text it decodes to, or, when it does
 * not decode as UTF-8, as its encoded form: never as nothing.
 */
export function countInlineData(walk: Walk, path: string, type: string | undefined, data: unknown): void {
  if (data === undefined || data === null) return;
  if (typeof data !== "string") throw invalidRequest(`'${path}' must be a string.`, path);
  if (isBinaryMedia(type)) {
    walk.call.mediaParts++;
    return;
  }
  textsOf(walk).push(base64Text(data) ?? data);
}

/**
 * Counts a URL that carries media. A data URL is inline data (base64, or percent-encoded text);
 * any other URL points at something the provider fetches: binary media when `kind` says the field
 * only takes images (or the URL's type is binary), else content the gateway cannot measure.
 */
export function countMediaUrl(walk: Walk, path: string, url: unknown, kind: "image" | "document"): void {
  if (url === undefined || url === null) return;
  if (typeof url !== "string") throw invalidRequest(`'${path}' must be a string.`, path);
  const parts = dataUrlParts(url);
  if (parts === undefined) {
    if (kind === "image") walk.call.mediaParts++;
    else walk.call.unmeasured.push({ path, what: "a document the provider fetches by URL" });
    return;
  }
  const { type, data } = parts;
  if (parts.base64) {
    countInlineData(walk, path, type, data);
  } else if (isBinaryMedia(type)) {
    walk.call.mediaParts++;
  } else {
    textsOf(walk).push(percentDecoded(data));
  }
}

/** What a `data:` URL holds. */
export interface DataUrlParts {
  /** The declared media type, as written; undefined when the URL declares none. */
  type: string | undefined;
  /** Whether the data is base64 (`;base64`), else percent-encoded text. */
  base64: boolean;
  /** Everything after the first comma (empty when there is none). */
  data: string;
  /** Whether the URL has the comma that starts its data. */
  hasData: boolean;
}

/** The parts of a `data:` URL, or undefined for any other URL. */
export function dataUrlParts(url: string): DataUrlParts | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  const parameters = url.slice(5, comma === -1 ? url.length : comma).split(";");
  return {
    type: parameters[0] === "" ? undefined : parameters[0],
    base64: parameters.includes("base64"),
    data: comma === -1 ? "" : url.slice(comma + 1),
    hasData: comma !== -1,
  };
}

function percentDecoded(data: string): string {
  try {
    return decodeURIComponent(data);
  } catch {
    return data;
  }
}

function textsOf(walk: Walk): CallText[] {
  return walk.section === "system" ? walk.call.system : walk.call.messages;
}
