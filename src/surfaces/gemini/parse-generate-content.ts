import { emptyCall, type LogicalCall } from "../../logical-call.js";
import type { JsonObject } from "../wire-fields.js";
import { readBody } from "../wire-rules.js";
import { generateContentBody, refuseBesideCache } from "./generate-content-body.js";

/** Parses a generateContent / streamGenerateContent body into its logical call. */
export function parseGenerateContent(body: JsonObject, model: string | undefined, stream: boolean): LogicalCall {
  const call = readBody(generateContentBody, body, emptyCall());
  call.model = model;
  call.stream = stream;
  refuseBesideCache(call, body);
  return call;
}
