import type { MessageTokensCount } from "@anthropic-ai/sdk/resources/messages";
import { Hono } from "hono";
import { handleJsonRequest } from "../../../simulated/handle-json-request.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { idAlphabets, randomId } from "../../../simulated/request-digest.js";
import type { RequestProblem } from "../../../simulated/request-problem.js";
import {
  countTokensRequestProblem,
  estimateMessagesTokens,
  messagesRequestProblem,
  simulateMessage,
} from "./messages.js";

/** The Anthropic surface of the simulated provider, to be mounted at `/anthropic`. */
export function createAnthropicSimulator(): Hono {
  const app = new Hono();
  app.post("/v1/messages", (c) =>
    handleJsonRequest(c.req.raw, { problemOf: messagesRequestProblem, simulate: simulateMessage, reject }),
  );
  app.post("/v1/messages/count_tokens", (c) =>
    handleJsonRequest(c.req.raw, { problemOf: countTokensRequestProblem, simulate: countTokens, reject }),
  );
  app.all("*", () => anthropicError(404, "not_found_error", "Unknown route of the simulated Anthropic API."));
  app.onError(() => anthropicError(500, "api_error", "The simulated Anthropic API failed."));
  return app;
}

function countTokens({ body }: JsonBody): Response {
  const counted: MessageTokensCount = { input_tokens: estimateMessagesTokens(body) };
  return Response.json(counted);
}

/** A refused request in Anthropic's native 400 shape. */
function reject(problem: RequestProblem): Response {
  switch (problem.kind) {
    case "unparseable":
      return anthropicError(400, "invalid_request_error", "The request body is not valid JSON.");
    case "missing":
      return anthropicError(400, "invalid_request_error", `${problem.field}: Field required`);
    case "invalid":
      return anthropicError(400, "invalid_request_error", `${problem.field}: must be ${problem.expected}`);
  }
}

/** Anthropic's native error body, `{type: "error", error: {type, message}, request_id}`, with its `request-id` header. */
function anthropicError(status: number, type: string, message: string): Response {
  const requestId = `req_01${randomId(22, idAlphabets.base58)}`;
  return Response.json(
    { type: "error", error: { type, message }, request_id: requestId },
    { status, headers: { "request-id": requestId } },
  );
}
