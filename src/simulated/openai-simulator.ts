import { Hono } from "hono";
import type { Model } from "openai/resources/models";
import { handleJsonRequest } from "./handle-json-request.js";
import { chatRequestProblem, simulateChatCompletion } from "./openai-chat.js";
import { responsesRequestProblem, simulateResponse } from "./openai-responses.js";
import { simulatedCreatedAt } from "./request-digest.js";
import type { RequestProblem } from "./request-problem.js";

/** The model ids `GET /v1/models` lists; any other requested model is echoed all the same. */
export const simulatedOpenAIModels = ["promptgate-simulated", "promptgate-simulated-mini", "promptgate-simulated-json"];

/** The OpenAI surface of the simulated provider, to be mounted at `/openai`. */
export function createOpenAISimulator(): Hono {
  const app = new Hono();
  app.post("/v1/chat/completions", (c) =>
    handleJsonRequest(c.req.raw, { problemOf: chatRequestProblem, simulate: simulateChatCompletion, reject }),
  );
  app.post("/v1/responses", (c) =>
    handleJsonRequest(c.req.raw, { problemOf: responsesRequestProblem, simulate: simulateResponse, reject }),
  );
  app.get("/v1/models", () => {
    const data: Model[] = simulatedOpenAIModels.map((id) => ({
      id,
      object: "model",
      created: simulatedCreatedAt,
      owned_by: "promptgate-simulated",
    }));
    return Response.json({ object: "list", data });
  });
  app.all("*", () =>
    openAIError(404, "invalid_request_error", "Unknown route of the simulated OpenAI API.", null, null),
  );
  app.onError(() => openAIError(500, "server_error", "The simulated OpenAI API failed.", null, null));
  return app;
}

/** A refused request in OpenAI's native 400 shape. */
function reject(problem: RequestProblem): Response {
  switch (problem.kind) {
    case "unparseable":
      return openAIError(400, "invalid_request_error", "The request body is not a JSON object.", null, null);
    case "missing":
      return openAIError(
        400,
        "invalid_request_error",
        `Missing required parameter: '${problem.field}'.`,
        problem.field,
        "missing_required_parameter",
      );
    case "invalid":
      return openAIError(
        400,
        "invalid_request_error",
        `Invalid type for '${problem.field}': expected ${problem.expected}.`,
        problem.field,
        "invalid_type",
      );
  }
}

/** OpenAI's native error body: `{error: {message, type, param, code}}`. */
function openAIError(
  status: number,
  type: string,
  message: string,
  param: string | null,
  code: string | null,
): Response {
  return Response.json({ error: { message, type, param, code } }, { status });
}
