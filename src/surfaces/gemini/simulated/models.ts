import type { Hono } from "hono";
import { geminiError, geminiInvalidArgument, geminiUnknownRoute } from "./error.js";

/**
 * A model as Gemini's REST API lists it. The SDK's `Model` type is the shape `@google/genai` turns it into
 * (`supportedActions`, not the wire's `supportedGenerationMethods`), so the wire shape is written out here, after
 * the API's documented example.
 */
interface GeminiModel {
  name: string;
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
  temperature: number;
  maxTemperature: number;
  topP: number;
  topK: number;
}

/** The model ids `GET /v1beta/models` lists; any other requested model is answered all the same. */
export const simulatedGeminiModels = ["promptgate-simulated", "promptgate-simulated-mini", "promptgate-simulated-json"];

const defaultPageSize = 50;
const maxPageSize = 1000;

const models: GeminiModel[] = simulatedGeminiModels.map((id) => ({
  name: `models/${id}`,
  version: "001",
  displayName: id,
  description: "The promptgate simulated provider: echo text, or JSON generated from the requested schema.",
  inputTokenLimit: 1_048_576,
  outputTokenLimit: 65_536,
  // What the simulator serves for every model.
  supportedGenerationMethods: ["generateContent", "countTokens", "createCachedContent"],
  temperature: 1,
  maxTemperature: 2,
  topP: 0.95,
  topK: 64,
}));

/** Gemini's `models.list` (paged with `pageSize` and `pageToken`) and `models.get`, below `/:version/models`. */
export function mountModels(app: Hono, isVersion: (version: string) => boolean): void {
  app.get("/:version/models", (c) =>
    isVersion(c.req.param("version")) ? list(new URL(c.req.url)) : geminiUnknownRoute(),
  );
  app.get("/:version/models/:id", (c) => {
    if (!isVersion(c.req.param("version"))) return geminiUnknownRoute();
    const model = models.find((candidate) => candidate.name === `models/${c.req.param("id")}`);
    return model === undefined ? geminiError(404, "NOT_FOUND", "The model is not found.") : Response.json(model);
  });
}

function list(url: URL): Response {
  const pageSize = Number(url.searchParams.get("pageSize") || defaultPageSize);
  const offset = Number(url.searchParams.get("pageToken") || 0);
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxPageSize) {
    return geminiInvalidArgument(`* ListModelsRequest.page_size: must be from 0 to ${maxPageSize}`);
  }
  if (!Number.isInteger(offset) || offset < 0) return geminiInvalidArgument("Invalid page token.");
  const end = offset + (pageSize === 0 ? defaultPageSize : pageSize);
  // The API leaves nextPageToken out on the last page.
  return Response.json(
    end < models.length
      ? { models: models.slice(offset, end), nextPageToken: String(end) }
      : { models: models.slice(offset) },
  );
}
