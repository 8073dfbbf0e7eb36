import { Hono } from "hono";
import type { Model } from "openai/resources/models";
import { handleJsonRequest } from "../../../simulated/handle-json-request.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { simulatedCreatedAt } from "../../../simulated/request-digest.js";
import type { RequestProblem } from "../../../simulated/request-problem.js";
import { estimatePromptTokens } from "../../../simulated/token-estimate.js";
import { chatRequestProblem, simulateChatCompletion } from "./chat.js";
import { inputItemsPage } from "./input-items.js";
import { responseEventStream, responsesRequestProblem, simulateResponse } from "./responses.js";
import { type StoredResponses, storedResponses } from "./stored-responses.js";

/** The model ids `GET /v1/models` lists; any other requested model is echoed all the same. */
export const simulatedOpenAIModels = ["promptgate-simulated", "promptgate-simulated-mini", "promptgate-simulated-json"];

/**
 * The OpenAI surface of the simulated provider, to be mounted at `/openai`. The responses it
 * stores live in memory, per simulator, for `previous_response_id` and the stored-response
 * routes: retrieve (as JSON, or as its event stream with `stream=true`), cancel, delete and
 * input items.
 */
export function createOpenAISimulator(): Hono {
  const app = new Hono();
  const stored = storedResponses();
  app.post("/v1/chat/completions", (c) =>
    handleJsonRequest(c.req.raw, { problemOf: chatRequestProblem, simulate: simulateChatCompletion, reject }),
  );
  app.post("/v1/responses", (c) =>
    handleJsonRequest(c.req.raw, {
      problemOf: responsesRequestProblem,
      simulate: (input) => continueResponse(input, stored),
      reject,
    }),
  );
  // The API's own count of a Responses call: its input, instructions and tools, and the stored history it continues.
  app.post("/v1/responses/input_tokens", (c) =>
    handleJsonRequest(c.req.raw, {
      problemOf: () => undefined,
      simulate: ({ body }) => {
        const previousId = body.previous_response_id;
        const previous = typeof previousId === "string" ? stored.find(previousId) : undefined;
        const prior = previous?.usage?.total_tokens ?? 0;
        const input_tokens = prior + estimatePromptTokens(body.instructions, body.input, body.tools);
        return Response.json({ object: "response.input_tokens", input_tokens });
      },
      reject,
    }),
  );
  app.get("/v1/responses/:id", (c) => {
    const response = stored.find(c.req.param("id"));
    if (response === undefined) return responseNotFound();
    if (c.req.query("stream") !== "true") return Response.json(response);
    const startingAfter = Number.parseInt(c.req.query("starting_after") ?? "", 10);
    return responseEventStream(response, Number.isNaN(startingAfter) ? -1 : startingAfter);
  });
  app.post("/v1/responses/:id/cancel", (c) => {
    const response = stored.cancel(c.req.param("id"));
    if (response === undefined) return responseNotFound();
    if (response.background !== true) {
      return openAIError(
        400,
        "invalid_request_error",
        "Only responses created with background set to true can be cancelled.",
        null,
        null,
      );
    }
    return Response.json(response);
  });
  app.delete("/v1/responses/:id", (c) => {
    const id = c.req.param("id");
    if (!stored.delete(id)) return responseNotFound();
    return Response.json({ id, object: "response", deleted: true });
  });
  app.get("/v1/responses/:id/input_items", (c) => {
    const items = stored.inputItems(c.req.param("id"));
    if (items === undefined) return responseNotFound();
    return Response.json(
      inputItemsPage(items, { after: c.req.query("after"), limit: c.req.query("limit"), order: c.req.query("order") }),
    );
  });
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

/** A Responses call on top of the stored response it names, if any; an unknown one is refused as OpenAI refuses it. */
function continueResponse(input: JsonBody, stored: StoredResponses): Response {
  const previousId = input.body.previous_response_id;
  if (typeof previousId !== "string") return simulateResponse(input, { priorTokens: 0, remember: stored.remember });
  const previous = stored.find(previousId);
  if (previous === undefined) {
    return openAIError(
      400,
      "invalid_request_error",
      "The previous response was not found.",
      "previous_response_id",
      "previous_response_not_found",
    );
  }
  return simulateResponse(input, { priorTokens: previous.usage?.total_tokens ?? 0, remember: stored.remember });
}

function responseNotFound(): Response {
  return openAIError(404, "invalid_request_error", "No response found with this id.", null, null);
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
