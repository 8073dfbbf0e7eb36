import { isJsonObject, type JsonObject } from "./json-value.js";
import { requestDigest } from "./request-digest.js";

/** A request body that parsed to a JSON object, with the digest of its raw text. */
export interface JsonBody {
  body: JsonObject;
  digest: string;
}

/** Reads a request body as a JSON object; `undefined` when it is empty, unparseable or not an object. */
export async function readJsonBody(request: Request): Promise<JsonBody | undefined> {
  const text = await request.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(body)) return undefined;
  return { body, digest: await requestDigest(text) };
}
