import type { CachedContent, ListCachedContentsResponse } from "@google/genai";
import type { Hono } from "hono";
import { sha256Hex } from "../../../json/sha256-hex.js";
import { isJsonObject, type JsonObject } from "../../../simulated/json-value.js";
import { readJsonBody } from "../../../simulated/read-json-body.js";
import type { SimulatedClock } from "../../../simulated/simulated-clock.js";
import { estimatePromptTokens } from "../../../simulated/token-estimate.js";
import { defaultCacheLifetimeMs, requestedExpiry } from "./cache-expiry.js";
import { geminiError, geminiInvalidArgument, geminiUnknownRoute } from "./error.js";
import { camelCaseKeys } from "./field-names.js";

/** At most this many cached contents are kept; the oldest goes first. */
const maxCaches = 10_000;
const defaultPageSize = 100;
const maxPageSize = 1000;
const maxDisplayNameLength = 128;
const namePattern = /^cachedContents\/[^/]+$/;

/** The metadata Gemini returns for a cached content (never its contents), with the expiry as a number. */
interface SimulatedCache {
  resource: CachedContent & { name: string; model: string };
  expiresAt: number;
  tokens: number;
}

/** What a generateContent's `cachedContent` amounts to: the cached tokens, or Gemini's refusal. */
export type CacheUse = { tokens: number } | { refusal: Response };

/** The simulated cachedContents API of one simulated provider, its caches kept in memory. */
export interface SimulatedCachedContents {
  /** Adds the create, list, get, patch and delete routes below `/:version/cachedContents`. */
  mount(app: Hono, isVersion: (version: string) => boolean): void;
  /** The cache a generateContent body names, checked as Gemini checks it; `{tokens: 0}` when it names none. */
  use(body: JsonObject, model: string): CacheUse;
}

/** Caches live until their expiry on `clock`; names are derived from the create's body and its sequence number. */
export function createCachedContents(clock: SimulatedClock): SimulatedCachedContents {
  const caches = new Map<string, SimulatedCache>();
  let sequence = 0;

  const live = (name: string): SimulatedCache | undefined => {
    const cache = caches.get(name);
    if (cache === undefined || cache.expiresAt > clock().getTime()) return cache;
    caches.delete(name);
    return undefined;
  };

  async function create(request: Request): Promise<Response> {
    const read = await readJsonBody(request);
    if (read === undefined) return geminiInvalidArgument("Invalid JSON payload received.");
    const body = camelCaseKeys(read.body);
    const problem = createProblem(body);
    if (problem !== undefined) return geminiInvalidArgument(problem);
    const now = clock().getTime();
    const expiry = requestedExpiry(body, now, now + defaultCacheLifetimeMs);
    if ("problem" in expiry) return geminiInvalidArgument(expiry.problem);
    sequence += 1;
    const name = `cachedContents/${(await sha256Hex(`${read.digest}:${sequence}`)).slice(0, 12)}`;
    const tokens = estimatePromptTokens(body.systemInstruction, body.contents, body.tools);
    const model = String(body.model);
    const resource: SimulatedCache["resource"] = {
      name,
      model: model.startsWith("models/") ? model : `models/${model}`,
      ...(typeof body.displayName === "string" ? { displayName: body.displayName } : {}),
      createTime: new Date(now).toISOString(),
      updateTime: new Date(now).toISOString(),
      expireTime: new Date(expiry.expiresAt).toISOString(),
      usageMetadata: { totalTokenCount: tokens },
    };
    caches.set(name, { resource, expiresAt: expiry.expiresAt, tokens });
    for (const oldest of caches.keys()) {
      if (caches.size <= maxCaches) break;
      caches.delete(oldest);
    }
    return Response.json(resource);
  }

  function list(url: URL): Response {
    const pageSize = Number(url.searchParams.get("pageSize") ?? defaultPageSize);
    const offset = Number(url.searchParams.get("pageToken") || 0);
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxPageSize) {
      return geminiInvalidArgument(`* ListCachedContentsRequest.page_size: must be from 0 to ${maxPageSize}`);
    }
    if (!Number.isInteger(offset) || offset < 0) return geminiInvalidArgument("Invalid page token.");
    const all = [...caches.keys()].map(live).filter((cache) => cache !== undefined);
    const end = offset + (pageSize === 0 ? defaultPageSize : pageSize);
    const page: ListCachedContentsResponse = { cachedContents: all.slice(offset, end).map((cache) => cache.resource) };
    if (end < all.length) page.nextPageToken = String(end);
    return Response.json(page);
  }

  async function patch(name: string, request: Request): Promise<Response> {
    const cache = live(name);
    if (cache === undefined) return notFound();
    const read = await readJsonBody(request);
    if (read === undefined) return geminiInvalidArgument("Invalid JSON payload received.");
    const now = clock().getTime();
    const expiry = requestedExpiry(camelCaseKeys(read.body), now, undefined);
    if ("problem" in expiry) return geminiInvalidArgument(expiry.problem);
    cache.expiresAt = expiry.expiresAt;
    cache.resource = {
      ...cache.resource,
      updateTime: new Date(now).toISOString(),
      expireTime: new Date(expiry.expiresAt).toISOString(),
    };
    return Response.json(cache.resource);
  }

  return {
    mount(app, isVersion) {
      const nameOf = (id: string) => `cachedContents/${id}`;
      app.post("/:version/cachedContents", (c) =>
        isVersion(c.req.param("version")) ? create(c.req.raw) : geminiUnknownRoute(),
      );
      app.get("/:version/cachedContents", (c) =>
        isVersion(c.req.param("version")) ? list(new URL(c.req.url)) : geminiUnknownRoute(),
      );
      app.get("/:version/cachedContents/:id", (c) => {
        if (!isVersion(c.req.param("version"))) return geminiUnknownRoute();
        const cache = live(nameOf(c.req.param("id")));
        return cache === undefined ? notFound() : Response.json(cache.resource);
      });
      app.patch("/:version/cachedContents/:id", (c) =>
        isVersion(c.req.param("version")) ? patch(nameOf(c.req.param("id")), c.req.raw) : geminiUnknownRoute(),
      );
      app.delete("/:version/cachedContents/:id", (c) => {
        if (!isVersion(c.req.param("version"))) return geminiUnknownRoute();
        const name = nameOf(c.req.param("id"));
        if (live(name) === undefined) return notFound();
        caches.delete(name);
        return Response.json({});
      });
    },
    use(body, model) {
      const named = body.cachedContent;
      if (named === undefined) return { tokens: 0 };
      if (typeof named !== "string" || !namePattern.test(named)) {
        return {
          refusal: geminiInvalidArgument("* GenerateContentRequest.cached_content: must be a cachedContents/{id} name"),
        };
      }
      if (body.systemInstruction !== undefined || body.tools !== undefined || body.toolConfig !== undefined) {
        return {
          refusal: geminiInvalidArgument(
            "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.",
          ),
        };
      }
      const cache = live(named);
      if (cache === undefined) return { refusal: notFound() };
      const requested = model.startsWith("models/") ? model : `models/${model}`;
      if (requested !== cache.resource.model) {
        return {
          refusal: geminiInvalidArgument("Model used by GenerateContent request and CachedContent has to be the same."),
        };
      }
      return { tokens: cache.tokens };
    },
  };
}

/** The first problem of a create body, worded as Gemini words it. */
function createProblem(body: JsonObject): string | undefined {
  if (body.model === undefined || body.model === null) return "* CachedContent.model: is not specified";
  if (typeof body.model !== "string" || body.model === "" || body.model === "models/") {
    return "* CachedContent.model: must be a model name";
  }
  if (body.contents !== undefined && !Array.isArray(body.contents)) return "* CachedContent.contents: must be a list";
  if (body.systemInstruction !== undefined && !isJsonObject(body.systemInstruction)) {
    return "* CachedContent.system_instruction: must be a Content";
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) return "* CachedContent.tools: must be a list";
  if (body.toolConfig !== undefined && !isJsonObject(body.toolConfig)) {
    return "* CachedContent.tool_config: must be a ToolConfig";
  }
  const displayName = body.displayName;
  if (
    displayName !== undefined &&
    (typeof displayName !== "string" || [...displayName].length > maxDisplayNameLength)
  ) {
    return `* CachedContent.display_name: must be a string of at most ${maxDisplayNameLength} characters`;
  }
  return undefined;
}

/** Gemini's answer for a cached content that does not exist, has expired or was deleted. */
function notFound(): Response {
  return geminiError(404, "NOT_FOUND", "CachedContent not found (or permission denied)");
}
