import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { maxNumberLiteral } from "../json/tape-scan.js";
import { auditJsonText, duplicateKeyError } from "./audit-json-text.js";
import { givenByRuntime } from "./runtime-env.js";

// ignoreBOM: false is the default, spelled out because the Workers runtime's types require the member.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Reads a request's whole body, refusing one over `limit` bytes with PAYLOAD_TOO_LARGE. */
export type BodyReader = (limit: number) => Promise<Uint8Array<ArrayBuffer>>;

/**
 * Where a runtime that reads a request's body more cheaply than through its `Request` puts its `BodyReader` in the
 * app's env (Hono's `c.env`): Node's reads the socket's chunks without the copy `Request.arrayBuffer()` makes. A
 * symbol, so that no Workers binding can stand in for it.
 */
export const bodyReaderKey: unique symbol = Symbol("promptgate.bodyReader");

/** How to read `request`'s body: the runtime's reader (see `bodyReaderKey`), else `readCappedBody`. */
export function bodyReaderOf(env: unknown, request: Request): BodyReader {
  return givenByRuntime<BodyReader>(env, bodyReaderKey) ?? ((limit) => readCappedBody(request, limit));
}

/** The refusal of a body over the gateway's limit of `limit` bytes. */
export function tooLarge(limit: number): GatewayError {
  return new GatewayError("PAYLOAD_TOO_LARGE", 413, `The request body exceeds the gateway's limit of ${limit} bytes.`);
}

/**
 * Reads a request body, stopping as soon as it passes `limit` bytes: a declared
 * content-length over the limit is refused before reading, and a body without one is cut
 * while it streams in, so an oversize body is never held whole. A body with a declared
 * length (which the HTTP server holds it to) is read in one piece, without a stream: on Node
 * that skips building a Web stream over the socket.
 */
export async function readCappedBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (declared !== null && /^\d+$/.test(declared)) {
    const body = new Uint8Array(await request.arrayBuffer());
    if (body.byteLength > limit) throw tooLarge(limit);
    return body;
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array<ArrayBuffer>;
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** The deepest nesting of objects and arrays a body may have; deeper ones are refused, not recursed into. */
export const maxNestingDepth = 512;

/**
 * Whether JSON text nests objects and arrays deeper than `limit`. A text with no more than
 * `limit` opening brackets in all cannot, which native `indexOf` tells at memory speed;
 * only a text with more is walked, once and without recursion.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let opening = 0;
  for (const bracket of ["{", "["]) {
    for (let index = text.indexOf(bracket); index !== -1; index = text.indexOf(bracket, index + 1)) {
      if (++opening > limit) return deepestNesting(text, limit) > limit;
    }
  }
  return false;
}

/** The deepest nesting of objects and arrays in JSON text, or the first depth past `stopAbove`. */
function deepestNesting(text: string, stopAbove: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (inString) {
      if (unit === 0x5c) index++;
      else if (unit === 0x22) inString = false;
    } else if (unit === 0x22) inString = true;
    else if (unit === 0x7b || unit === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (unit === 0x7d || unit === 0x5d) depth--;
  }
  return deepest;
}

/** A request body parsed, and what its text says beyond the parsed value. */
export interface ParsedBody {
  body: JsonObject;
  /** Code points by which its number literals are written longer than their values (see `auditJsonText`). */
  numberExcess: number;
}

/**
 * Decodes a body as UTF-8 JSON whose top level is an object, or INVALID_REQUEST. A body with a
 * duplicate key in any object is refused too (see `auditJsonText`): the gateway forwards the
 * bytes it measured, and JSON.parse would have measured only the last occurrence.
 */
export function parseJsonBody(bytes: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw invalidRequest("The request body is not valid UTF-8.");
  }
  if (nestsDeeperThan(text, maxNestingDepth)) {
    throw invalidRequest(`The request body nests objects and arrays deeper than ${maxNestingDepth} levels.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest("The request body is not valid JSON.");
  }
  if (!isObject(value)) throw invalidRequest("The request body must be a JSON object.");
  const audit = auditJsonText(text, value);
  if (audit.duplicate !== undefined) throw duplicateKeyError(audit.duplicate);
  if (audit.longestNumber > maxNumberLiteral) {
    throw invalidRequest(`The request body has a number literal longer than ${maxNumberLiteral} characters.`);
  }
  return { body: value, numberExcess: audit.numberExcess };
}
