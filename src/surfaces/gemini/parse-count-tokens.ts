import { invalidRequest } from "../../errors/gateway-error.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { asArray, asObject, type JsonObject } from "../wire-fields.js";
import { geminiMember } from "./gemini-member.js";
import { parseGenerateContent } from "./parse-generate-content.js";

/** Parses a countTokens body: either `{contents}` or `{generateContentRequest}`, never both. */
export function parseCountTokens(body: JsonObject, model: string | undefined): LogicalCall {
  const request = geminiMember(body, "generateContentRequest", "");
  if (request !== undefined) {
    if (body.contents !== undefined) {
      throw invalidRequest("'contents' and 'generateContentRequest' must not both be set.", "contents");
    }
    const requestBody = asObject(request, "generateContentRequest");
    return parseGenerateContent(requestBody, model, false, "generateContentRequest.");
  }
  if (body.contents === undefined) return { ...emptyCall(), model };
  asArray(body.contents, "contents");
  return parseGenerateContent({ contents: body.contents }, model, false);
}
