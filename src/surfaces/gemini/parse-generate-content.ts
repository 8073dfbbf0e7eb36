import type { JsonObject } from "../../json/json-object.js";
import type { Tape } from "../../json/tape.js";
import { tapeValue } from "../../json/tape-values.js";
import { emptyCall, type LogicalCall } from "../../logical-call.js";
import { readBody, readTape } from "../wire-rules.js";
import { generateContentBody, refuseBesideCache } from "./generate-content-body.js";

/** Parses a generateContent / streamGenerateContent body into its logical call. */
export function parseGenerateContent(body: JsonObject, model: string | undefined, stream: boolean): LogicalCall {
  const call = readBody(generateContentBody, body, emptyCall());
  call.model = model;
  call.stream = stream;
  refuseBesideCache(call, body);
  return call;
}

/** Reads a generateContent / streamGenerateContent body from its tape, as `parseGenerateContent` reads it parsed. */
export function readGenerateContentTape(tape: Tape, model: string | undefined, stream: boolean): LogicalCall {
  const call = readTape(generateContentBody, tape, emptyCall());
  call.model = model;
  call.stream = stream;
  // Only a call on a cached content has members it may not combine with it; only then is the body parsed.
  if (call.cachedPrefix !== undefined) refuseBesideCache(call, tapeValue(tape, 0) as JsonObject);
  return call;
}
