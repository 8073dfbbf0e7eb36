import type { JsonObject } from "../../json/json-object.js";
import { countInlineData, countMediaUrl } from "../media.js";
import { object, type Rule, skip, text, unmeasured } from "../wire-rules.js";

/** File names whose extension makes OpenAI read inline data as binary media (PDF, images, audio, video). */
const binaryFileName =
  /\.(?:pdf|png|jpe?g|gif|webp|heic|heif|bmp|tiff?|mp3|wav|m4a|ogg|flac|aac|mp4|mov|webm|mpe?g|avi)$/i;

/**
 * A file input (Chat `file`, Responses `input_file`), with `members` beside it. Inline data counts
 * by its type: a data URL's, else the file name's (the API reads the type from the extension). A
 * stored file or a file URL is content the gateway cannot measure; the file name counts as text.
 */
export function fileInput(members: Record<string, Rule> = {}): Rule {
  const fields = object({
    ...members,
    file_data: skip,
    file_id: unmeasured("a stored file"),
    file_url: skip,
    filename: text,
  });
  return (value, path, walk) => {
    if (value === undefined || value === null) return;
    fields(value, path, walk);
    const file = value as JsonObject;
    const data = file.file_data;
    if (typeof data === "string" && data.startsWith("data:"))
      countMediaUrl(walk, `${path}.file_data`, data, "document");
    else {
      const name = typeof file.filename === "string" ? file.filename : "";
      countInlineData(walk, `${path}.file_data`, binaryFileName.test(name) ? "application/pdf" : undefined, data);
    }
    countMediaUrl(walk, `${path}.file_url`, file.file_url, "document");
  };
}
