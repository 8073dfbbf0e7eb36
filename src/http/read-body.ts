import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";

// ignoreBOM: false is the default, spelled out because the Workers runtime's types require the member.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function tooLarge(limit: number): GatewayError {
  return new GatewayError("PAYLOAD_TOO_LARGE", 413, `The request body exceeds the gateway's limit of ${limit} bytes.`);
}

/**
 * Reads a request body, stopping as soon as it passes `limit` bytes: a declared
 * content-length over the limit is refused before reading, and a body without one is cut
 * while it streams in, so an oversize body is never held whole.
 */
export async function readCappedBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit);
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
 * Whether JSON bytes nest objects and arrays deeper than `limit`, found in one pass without
 * recursion. Quotes and backslashes are ASCII, so they never occur inside a multi-byte character.
 */
export function nestsDeeperThan(body: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === 0x5c) index++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      if (++depth > limit) return true;
    } else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return false;
}

/** Decodes a body as UTF-8 JSON whose top level is an object, or INVALID_REQUEST. */
export function parseJsonObject(body: Uint8Array): JsonObject {
  if (body.length > 2 * maxNestingDepth && nestsDeeperThan(body, maxNestingDepth)) {
    throw invalidRequest(`The request body nests objects and arrays deeper than ${maxNestingDepth} levels.`);
  }
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw invalidRequest("The request body is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest("The request body is not valid JSON.");
  }
  if (!isObject(value)) throw invalidRequest("The request body must be a JSON object.");
  return value;
}
