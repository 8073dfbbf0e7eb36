import { expect } from "vitest";

// The cross-principal matrix (issue 52): for each stateful thing a first key makes (a session's stored response, an
// answer job, evidence, a source index), every route and method that names it by id, as a second key sends them.
// The second key must get exactly the answer an unknown id of the same shape gets (status, content type and body,
// its ref, the id itself and an expiry time masked), and nothing may reach the provider. Imports no `node:` module,
// so that the Node and workerd tests share it.

/** Sends one request as `key`: `{id}` in the path, the body and the header values stands for the id. */
export type Send = (key: string, request: IdRequest, id: string) => Promise<Response>;

/** A request naming a kept thing by id. */
export interface IdRequest {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The routes that name a stored response (a session's turn, or an answer job) by id. */
export function responseRequests(base: string): IdRequest[] {
  return [
    { name: "GET the response", method: "GET", path: `${base}/responses/{id}` },
    { name: "GET its input items", method: "GET", path: `${base}/responses/{id}/input_items` },
    { name: "POST cancel", method: "POST", path: `${base}/responses/{id}/cancel` },
    { name: "DELETE it", method: "DELETE", path: `${base}/responses/{id}` },
    {
      name: "continue it (previous_response_id)",
      method: "POST",
      path: `${base}/responses`,
      body: { model: "gpt-4.1", input: "go on", previous_response_id: "{id}" },
    },
    {
      name: "count a continuation's tokens",
      method: "POST",
      path: `${base}/responses/input_tokens`,
      body: { model: "gpt-4.1", input: "go on", previous_response_id: "{id}" },
    },
  ];
}

/** The routes that name evidence by id; the PUT last, since it makes the second key's own. */
export const evidenceRequests: IdRequest[] = [
  {
    name: "recall a page of it",
    method: "POST",
    path: "/promptgate/window/recall",
    body: { kind: "recall", evidence_refs: ["{id}"], page: 0 },
  },
  { name: "DELETE it", method: "DELETE", path: "/promptgate/window/evidence/{id}" },
  { name: "PUT over it", method: "PUT", path: "/promptgate/window/evidence/{id}", body: { rows: ["second key"] } },
];

/** The routes that name a source index by id; the PUT last, since it makes the second key's own. */
export function sourceIndexRequests(base: string): IdRequest[] {
  return [
    {
      name: "name it on a call (x-promptgate-sources)",
      method: "POST",
      path: `${base}/chat/completions`,
      body: { model: "gpt-4.1", messages: [{ role: "user", content: "cite" }] },
      headers: { "x-promptgate-sources": "{id}" },
    },
    { name: "DELETE it", method: "DELETE", path: "/promptgate/window/sources/{id}" },
    { name: "PUT over it", method: "PUT", path: "/promptgate/window/sources/{id}", body: { sources: ["B1"] } },
  ];
}

/** The request `request` stands for, with its id. */
export function requestFor(origin: string, key: string, request: IdRequest, id: string): Request {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name] = value.replaceAll("{id}", id);
  if (request.body !== undefined) headers["content-type"] = "application/json";
  return new Request(`${origin}${request.path.replaceAll("{id}", id)}`, {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body).replaceAll("{id}", id) }),
  });
}

/** An id of the same shape and length that names nothing. */
export function unknownLike(id: string): string {
  const tail = id.endsWith("0000") ? "1111" : "0000";
  return `${id.slice(0, -4)}${tail}`;
}

/** What a caller learns from an answer: status, content type, and its body with ref, id and expiry masked. */
async function seenOf(response: Response, id: string) {
  const body = (await response.text())
    .replaceAll(id, "{id}")
    .replace(/ref_[0-9a-f]{16}/g, "{ref}")
    .replace(/"expires_at":"[^"]*"/g, '"expires_at":"{time}"');
  return { status: response.status, type: response.headers.get("content-type"), body };
}

/**
 * Sends every request as the second key, on the first key's id and on an unknown one alike, and expects the same
 * answer and nothing sent upstream. Returns what the second key saw, by request name.
 */
export async function expectUnknownToSecond(
  send: Send,
  sentUpstream: () => number,
  secondKey: string,
  requests: IdRequest[],
  firstKeysId: string,
): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  const unknown = unknownLike(firstKeysId);
  for (const request of requests) {
    const before = sentUpstream();
    const onFirstKeys = await seenOf(await send(secondKey, request, firstKeysId), firstKeysId);
    const onUnknown = await seenOf(await send(secondKey, request, unknown), unknown);
    expect({ request: request.name, ...onFirstKeys }).toEqual({ request: request.name, ...onUnknown });
    expect({ request: request.name, sent: sentUpstream() - before }).toEqual({ request: request.name, sent: 0 });
    statuses[request.name] = onFirstKeys.status;
  }
  return statuses;
}
