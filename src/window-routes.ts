import { type Context, Hono } from "hono";
import type { Deps } from "./deps.js";
import { GatewayError, invalidRequest } from "./errors/gateway-error.js";
import { renderPlainError } from "./errors/render-plain-error.js";
import { bearerToken } from "./http/keys.js";
import { bodyReaderOf, parseJsonBody } from "./http/read-body.js";
import type { RouteEnv } from "./http/route-env.js";
import { sha256Hex } from "./json/sha256-hex.js";
import { isGatewayKey } from "./pipeline/authorize-call.js";
import { callLabels } from "./pipeline/call-labels.js";
import { sourceIndexId } from "./pipeline/call-sources.js";
import { completeCall } from "./pipeline/complete-call.js";
import { principalOf } from "./pipeline/principal.js";
import type { CallRecord } from "./record/call-record.js";
import { isObject, type JsonObject } from "./surfaces/wire-fields.js";
import { codePoints } from "./window/code-points.js";
import { buildContext, type Chunk, type ContextOptions, contextRequestLimits } from "./window/context-builder.js";
import {
  checkpointDue,
  defaultPageChars,
  fragmentAnswerLimits,
  isPageSize,
  maxPageChars,
  minPageChars,
  pageOf,
  pagesOf,
  pagingOf,
} from "./window/fragment.js";
import { describeSchema, SchemaExpansionError } from "./window/signature.js";

/**
 * `/promptgate/window/*`: the window toolkit over HTTP, for controllers in any language (JSON in, JSON out, errors in
 * promptgate's plain shape). With gateway keys configured, a request presents one as a bearer key, as on the APIs.
 */
export function windowRoutes(deps: Deps): Hono<RouteEnv> {
  const window = new Hono<RouteEnv>();
  window.use(async function requireGatewayKey(c, next) {
    if (!(await isGatewayKey(deps.config, bearerToken(c.req.header("authorization") ?? null)))) {
      return renderPlainError(
        new GatewayError("authentication", 401, "A valid gateway key is required."),
        c.get("ref"),
      );
    }
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

  // PUT /evidence/{id}?page_chars=1600 with the result as its body → what recall will page it into.
  window.put("/evidence/:id", async (c) => {
    const id = c.req.param("id");
    if (!evidenceId.test(id)) {
      throw invalidRequest("An evidence id is 1 to 64 letters, digits, '_', '.' or '-' (e.g. E000001).", "id");
    }
    const query = c.req.query("page_chars");
    const pageChars = pageCharsOf(query === undefined ? defaultPageChars : Number(query));
    const body = await jsonBodyOf(deps, c);
    const text = JSON.stringify(body);
    const now = deps.now().getTime();
    const principal = await callerOf(deps, c.req.raw);
    const usage = await deps.store.evidenceUsage(principal, now, id);
    if (usage.count + 1 > maxEvidence || usage.chars + codePoints(text) > maxEvidenceChars) {
      throw new GatewayError(
        "EVIDENCE_LIMIT",
        400,
        `A caller keeps at most ${maxEvidence} results of ${maxEvidenceChars} characters in all; this one would pass ` +
          "that. Delete results it no longer needs (DELETE /promptgate/window/evidence/{id}), or let them expire.",
      );
    }
    const expiresAt = now + evidenceKeptMs;
    await deps.store.putEvidence({ principal, id, text, pageChars, createdAt: now, expiresAt });
    const { total, pages } = pagingOf(text, pageChars);
    const kept = {
      id,
      pages,
      page_chars: pageChars,
      total_chars: total,
      sha256: await sha256Hex(text),
      expires_at: new Date(expiresAt).toISOString(),
    };
    return c.json(kept, 200, { "x-promptgate-ref": c.get("ref") });
  });

  // PUT /sources/{id} with {"sources": ["D1", …]} → a source index that calls name with x-promptgate-sources.
  window.put("/sources/:id", async (c) => {
    const id = c.req.param("id");
    if (!sourceIndexId.test(id)) {
      throw invalidRequest("A source index id is 1 to 64 letters, digits, '_', '.' or '-'.", "id");
    }
    const body = await jsonBodyOf(deps, c);
    const sources = sourcesOf(body.sources);
    const now = deps.now().getTime();
    const principal = await callerOf(deps, c.req.raw);
    const expiresAt = now + evidenceKeptMs;
    await deps.store.putSourceIndex({ principal, id, sources, createdAt: now, expiresAt });
    const kept = { id, sources: sources.length, expires_at: new Date(expiresAt).toISOString() };
    return c.json(kept, 200, { "x-promptgate-ref": c.get("ref") });
  });

  window.delete("/evidence/:id", async (c) => {
    const id = c.req.param("id");
    if (!evidenceId.test(id)) throw invalidRequest("An evidence id is 1 to 64 letters, digits, '_', '.' or '-'.", "id");
    await deps.store.deleteEvidence(await callerOf(deps, c.req.raw), id);
    return c.body(null, 204, { "x-promptgate-ref": c.get("ref") });
  });

  // {"kind": "recall", "evidence_refs": ["E000001"], "page": 1} → that one page, recorded with the call.
  window.post("/recall", async (c) => {
    const record = recallRecord(deps, c.req.raw, c.get("ref"));
    try {
      const body = await jsonBodyOf(deps, c);
      const { evidence, page } = recallOf(body);
      record.recall = { evidence, page };
      const principal = await callerOf(deps, c.req.raw);
      const kept = await deps.store.getEvidence(principal, evidence, deps.now().getTime());
      if (kept === undefined) {
        throw new GatewayError(
          "EVIDENCE_NOT_FOUND",
          400,
          "No evidence of this id is kept for this caller (unknown, or expired).",
          {
            param: "evidence_refs",
          },
        );
      }
      // One page is cut, however many the evidence has (a result kept before pages had a minimum size may have many).
      const { pages } = pagingOf(kept.text, kept.pageChars);
      record.recall.pages = pages;
      const chosen = await pageOf(kept.text, kept.pageChars, page);
      if (chosen === undefined) {
        throw new GatewayError("PAGE_OUT_OF_RANGE", 400, `The evidence has ${pages} pages, numbered from 0.`, {
          param: "page",
        });
      }
      record.decision = "answered";
      return c.json(chosen, 200, { "x-promptgate-ref": c.get("ref") });
    } catch (error) {
      if (GatewayError.isInstance(error)) record.error = error.code;
      throw error;
    } finally {
      await completeCall(deps, record);
    }
  });
  return window;
}

/** A page size as asked for (a body member or a query parameter), checked. */
function pageCharsOf(value: unknown): number {
  if (!isPageSize(value)) {
    throw invalidRequest(`'page_chars' must be a whole number from ${minPageChars} to ${maxPageChars}.`, "page_chars");
  }
  return value;
}

/** The principal of a toolkit request: the keyed hash of its bearer key (none is one principal too). */
function callerOf(deps: Deps, request: Request): Promise<string> {
  return principalOf(deps.store, bearerToken(request.headers.get("authorization")));
}

/** An evidence id: short, and safe to repeat in a record and a log line. */
const evidenceId = /^[A-Za-z0-9_.-]{1,64}$/;

/** What one caller may keep as evidence at once: results, and their code points in all. */
const maxEvidence = 1_000;
const maxEvidenceChars = 50_000_000;

/** How long kept evidence can be recalled: a case resumed within a week finds it. */
const evidenceKeptMs = 7 * 24 * 60 * 60 * 1000;

/** The most source ids one index holds, and the longest id. */
const maxSources = 10_000;
const maxSourceIdChars = 200;

/** The source ids of a source index: a list of distinct, non-empty strings, bounded in number and length. */
function sourcesOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > maxSources) {
    throw invalidRequest(`The body must be {"sources": [...]}, a list of at most ${maxSources} source ids.`, "sources");
  }
  value.forEach((id, index) => {
    if (typeof id !== "string" || id.length === 0 || [...id].length > maxSourceIdChars) {
      throw invalidRequest(
        `'sources[${index}]' must be a source id: a string of 1 to ${maxSourceIdChars} characters.`,
        `sources[${index}]`,
      );
    }
  });
  return [...new Set(value as string[])];
}

/** The evidence and page a recall names: exactly one evidence, a page number from 0. */
function recallOf(body: JsonObject): { evidence: string; page: number } {
  if (body.kind !== "recall") throw invalidRequest('A recall is {"kind": "recall", …}.', "kind");
  const refs = body.evidence_refs;
  if (!Array.isArray(refs) || refs.length !== 1 || typeof refs[0] !== "string") {
    throw new GatewayError(
      "RECALL_ONE_EVIDENCE",
      400,
      "A recall reads exactly one evidence: 'evidence_refs' must hold one id.",
      { param: "evidence_refs" },
    );
  }
  const evidence = refs[0];
  if (!evidenceId.test(evidence)) {
    throw new GatewayError("EVIDENCE_NOT_FOUND", 400, "No evidence of this id is kept for this caller.", {
      param: "evidence_refs",
    });
  }
  const page = body.page ?? 0;
  if (!Number.isInteger(page) || (page as number) < 0) {
    throw new GatewayError("PAGE_OUT_OF_RANGE", 400, "'page' is a page number from 0.", { param: "page" });
  }
  return { evidence, page: page as number };
}

/** The record of a recall: the toolkit's calls are traced like the APIs' (which evidence, which page). */
function recallRecord(deps: Deps, request: Request, ref: string): CallRecord {
  const labels = callLabels(request.headers);
  return {
    ref,
    time: deps.now().toISOString(),
    policy: undefined,
    case: labels.caseId,
    call_label: labels.callLabel,
    surface: "window",
    provider: "promptgate",
    model: undefined,
    route: "/recall",
    preflight: undefined,
    provider_check: undefined,
    decision: "rejected",
    upstream_status: undefined,
    validation: null,
    repair: undefined,
    projection_omitted: [],
    error: undefined,
  };
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

/** A window route's JSON body, read as every request's body is (see `bodyReaderOf`). */
async function jsonBodyOf(deps: Deps, c: Context<RouteEnv>): Promise<JsonObject> {
  return parseJsonBody(await bodyReaderOf(c.env, c.req.raw)(deps.config.maxBodyBytes)).body;
}
