import { Hono } from "hono";
import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { renderPlainError } from "../errors/render-plain-error.js";
import { bearerToken } from "../http/keys.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { authenticationRequired } from "../pipeline/authorize-call.js";
import { identifyCaller } from "../pipeline/caller.js";
import { codePoints } from "../window/code-points.js";
import { buildContext, type Chunk, type ContextOptions, contextRequestLimits } from "../window/context-builder.js";
import {
  checkpointDue,
  defaultPageChars,
  fragmentAnswerLimits,
  maxPageChars,
  pagesOf,
  pagingOf,
} from "../window/fragment.js";
import { describeSchema, SchemaExpansionError } from "../window/signature.js";
import { addKeptRoutes } from "./kept-routes.js";
import { jsonBodyOf, pageCharsOf, type WindowEnv } from "./request-parts.js";

/**
 * `/promptgate/window/*`: the window toolkit over HTTP, for controllers in any language (JSON in, JSON out, errors in
 * promptgate's plain shape). With gateway keys configured, a request presents one as a bearer key, as on the APIs.
 */
export function windowRoutes(deps: Deps): Hono<WindowEnv> {
  const window = new Hono<WindowEnv>();
  window.use(async function requireGatewayKey(c, next) {
    const caller = await identifyCaller(deps, bearerToken(c.req.header("authorization") ?? null));
    if (caller === undefined) return renderPlainError(authenticationRequired(), c.get("ref"));
    c.set("caller", caller);
    await next();
  });
  window.onError((error, c) => {
    if (!GatewayError.isInstance(error)) throw error;
    return renderPlainError(error, c.get("ref"));
  });

  // {"value": …, "page_chars": 1600} → {"fragments": [json_fragment, …]}
  window.post("/fragment", async (c) => {
    const body = await jsonBodyOf(deps, c);
    if (!isObject(body) || !("value" in body)) {
      throw invalidRequest("The body must be a JSON object with the value to cut into pages under 'value'.", "value");
    }
    const pageChars = pageCharsOf(body.page_chars ?? defaultPageChars);
    const serialized = JSON.stringify(body.value);
    const { total, pages } = pagingOf(serialized, pageChars);
    if (total > fragmentAnswerLimits.maxChars) {
      throw invalidRequest(
        `One answer pages at most ${fragmentAnswerLimits.maxChars} characters of compact JSON; keep a larger value ` +
          "as evidence (PUT /promptgate/window/evidence/{id}) and recall its pages one at a time.",
        "value",
      );
    }
    if (pages > fragmentAnswerLimits.maxPages) {
      throw invalidRequest(
        `One answer holds at most ${fragmentAnswerLimits.maxPages} pages; ask for larger pages ('page_chars', ` +
          `up to ${maxPageChars}).`,
        "page_chars",
      );
    }
    const fragments = await pagesOf(serialized, pageChars);
    return c.json({ fragments }, 200, { "x-promptgate-ref": c.get("ref") });
  });

  // {"schema": {…}} → its compact signature and form example, with their sizes and the schema's.
  window.post("/signature", async (c) => {
    const body = await jsonBodyOf(deps, c);
    if (!isObject(body.schema))
      throw invalidRequest('The body must be {"schema": {…}}, a JSON Schema object.', "schema");
    try {
      return c.json(describeSchema(body.schema), 200, { "x-promptgate-ref": c.get("ref") });
    } catch (error) {
      if (SchemaExpansionError.isInstance(error)) throw invalidRequest(error.message, "schema");
      throw error;
    }
  });

  // {"chunks": [{text, source, page?, score}], "limit_chars": 6000, "top_k"?, "max_per_document"?, "similarity"?,
  //  "label"?, "page_label"?} → the block, its selection, its sources and its size.
  window.post("/context", async (c) => {
    const body = await jsonBodyOf(deps, c);
    return c.json(buildContext(chunksOf(body.chunks), contextOptionsOf(body)), 200, {
      "x-promptgate-ref": c.get("ref"),
    });
  });

  // {"results_bytes": 5200, "log_bytes": 800, "limits"?: {"results_bytes", "log_bytes"}} → {"due": true}: an advice.
  window.post("/checkpoint", async (c) => {
    const body = await jsonBodyOf(deps, c);
    const limits = body.limits ?? {};
    if (!isObject(limits)) throw invalidRequest("'limits' must be an object of results_bytes and log_bytes.", "limits");
    const size = (value: unknown, name: string, required: boolean): number | undefined => {
      if (value === undefined && !required) return undefined;
      if (!Number.isInteger(value) || (value as number) < 0) {
        throw invalidRequest(`'${name}' must be a whole number of bytes.`, name);
      }
      return value as number;
    };
    const sizes = {
      resultsBytes: size(body.results_bytes, "results_bytes", true) as number,
      logBytes: size(body.log_bytes, "log_bytes", true) as number,
    };
    const resultsLimit = size(limits.results_bytes, "limits.results_bytes", false);
    const logLimit = size(limits.log_bytes, "limits.log_bytes", false);
    const due = checkpointDue(sizes, {
      ...(resultsLimit === undefined ? {} : { resultsBytes: resultsLimit }),
      ...(logLimit === undefined ? {} : { logBytes: logLimit }),
    });
    return c.json({ due }, 200, { "x-promptgate-ref": c.get("ref") });
  });

  addKeptRoutes(window, deps);

  return window;
}

/** The chunks of a context request, each checked: text and source strings, a finite score, a page if any. */
function chunksOf(value: unknown): Chunk[] {
  const { maxChunks, maxTextChars } = contextRequestLimits;
  if (!Array.isArray(value) || value.length > maxChunks) {
    throw invalidRequest(`'chunks' must be an array of at most ${maxChunks} {text, source, page?, score}.`, "chunks");
  }
  let textChars = 0;
  return value.map((item, index) => {
    const at = `chunks[${index}]`;
    if (!isObject(item) || typeof item.text !== "string" || typeof item.source !== "string") {
      throw invalidRequest(`'${at}' must have a string 'text' and 'source'.`, at);
    }
    textChars += codePoints(item.text);
    if (textChars > maxTextChars) {
      throw invalidRequest(`The chunks' texts may hold at most ${maxTextChars} characters in all.`, "chunks");
    }
    if (typeof item.score !== "number" || !Number.isFinite(item.score)) {
      throw invalidRequest(`'${at}.score' must be a number.`, `${at}.score`);
    }
    const page = item.page;
    if (page !== undefined && page !== null && typeof page !== "number" && typeof page !== "string") {
      throw invalidRequest(`'${at}.page' must be a number or a string.`, `${at}.page`);
    }
    return { text: item.text, source: item.source, score: item.score, ...(page == null ? {} : { page }) };
  });
}

/** The options of a context request, each checked. */
function contextOptionsOf(body: JsonObject): ContextOptions {
  const whole = (name: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): number | undefined => {
    const value = body[name];
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || (value as number) < minimum || (value as number) > maximum) {
      const range = maximum === Number.MAX_SAFE_INTEGER ? `of at least ${minimum}` : `from ${minimum} to ${maximum}`;
      throw invalidRequest(`'${name}' must be a whole number ${range}.`, name);
    }
    return value as number;
  };
  const limitChars = whole("limit_chars", 0);
  if (limitChars === undefined)
    throw invalidRequest("'limit_chars' is required: the block's size in characters.", "limit_chars");
  const options: ContextOptions = { limitChars };
  const topK = whole("top_k", 1, contextRequestLimits.maxTopK);
  if (topK !== undefined) options.topK = topK;
  const maxPerDocument = whole("max_per_document", 1, contextRequestLimits.maxPerDocument);
  if (maxPerDocument !== undefined) options.maxPerDocument = maxPerDocument;
  if (body.similarity !== undefined) {
    if (typeof body.similarity !== "number" || body.similarity < 0 || body.similarity > 1) {
      throw invalidRequest("'similarity' must be a number from 0 to 1.", "similarity");
    }
    options.similarity = body.similarity;
  }
  for (const [name, key] of [
    ["label", "label"],
    ["page_label", "pageLabel"],
  ] as const) {
    const value = body[name];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.length > 40) throw invalidRequest(`'${name}' must be a short string.`, name);
    options[key] = value;
  }
  return options;
}
