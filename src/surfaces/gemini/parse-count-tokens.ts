import { invalidRequest } from "../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../json/json-object.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { arrayOf, readBody } from "../wire-rules.js";
import { content, generateContentMembers, message, refuseBesideCache } from "./generate-content-body.js";

const countTokensBody = message({
  contents: arrayOf(content),
  generateContentRequest: message(generateContentMembers),
});

/** Parses a countTokens body: either `{contents}` or `{generateContentRequest}`, never both. */
export function parseCountTokens(body: JsonObject, model: string | undefined): LogicalCall {
  const request = body.generateContentRequest ?? body.generate_content_request;
  if (request !== undefined && request !== null && body.contents !== undefined && body.contents !== null) {
    throw invalidRequest("'contents' and 'generateContentRequest' must not both be set.", "contents");
  }
  const call = readBody(countTokensBody, body, emptyCall());
  call.model = model;
  if (isObject(request)) refuseBesideCache(call, request, "generateContentRequest.");
  return call;
}
