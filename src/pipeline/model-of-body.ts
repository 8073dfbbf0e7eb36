import { parseJsonBody } from "../http/read-body.js";

/**
 * The model a request body names in a top-level `model` string, for the record and log line of a call
 * refused before its logical call was read (an invalid field). Undefined when the body is no JSON
 * object or names none; cut to 200 characters, as it is the client's text.
 */
export function modelOfBody(bytes: Uint8Array): string | undefined {
  try {
    const { body } = parseJsonBody(bytes);
    const model = body.model;
    return typeof model === "string" ? model.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}
