import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../surfaces/wire-fields.js";

const decoder = new TextDecoder("utf-8", { fatal: true });

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

/** Decodes a body as UTF-8 JSON whose top level is an object, or INVALID_REQUEST. */
export function parseJsonObject(body: Uint8Array): JsonObject {
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
