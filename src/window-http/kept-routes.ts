import type { Hono } from "hono";
import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { JsonObject } from "../json/json-object.js";
import { sha256Hex } from "../json/sha256-hex.js";
import { callLabels } from "../pipeline/call-labels.js";
import { callRecorder } from "../pipeline/call-recorder.js";
import { sourceIndexId } from "../pipeline/call-sources.js";
import type { CallRecord } from "../record/call-record.js";
import { codePoints } from "../window/code-points.js";
import { defaultPageChars, pageOf, pagingOf } from "../window/fragment.js";
import { keptForMs, keptQuota } from "../window/kept-quota.js";
import { jsonBodyOf, pageCharsOf, type WindowEnv } from "./request-parts.js";

/**
 * The toolkit's kept state, per principal: evidence (`PUT`/`DELETE evidence/{id}`, `recall`) and source indexes
 * (`PUT`/`DELETE sources/{id}`), within the quotas of `keptQuota`. Added to the window's app, after its key check.
 */
export function addKeptRoutes(window: Hono<WindowEnv>, deps: Deps): void {
  const quota = keptQuota(deps.store, !deps.config.gatewayKeyMode);

  // PUT /evidence/{id}?page_chars=1600 with the result as its body → what recall will page it into.
  window.put("/evidence/:id", async (c) => {
    const id = c.req.param("id");
    if (!evidenceId.test(id)) {
      throw invalidRequest("An evidence id is 1 to 64 letters, digits, '_', '.' or '-' (e.g. E000001).", "id");
    }
    const query = c.req.query("page_chars");
    const pageChars = pageCharsOf(query === undefined ? defaultPageChars : Number(query));
    const text = JSON.stringify(await jsonBodyOf(deps, c));
    const now = deps.now().getTime();
    const principal = await c.get("caller").principal();
    const expiresAt = now + keptForMs;
    await quota.keep({ kind: "evidence", principal, id }, codePoints(text), now, () =>
      deps.store.putEvidence({ principal, id, text, pageChars, createdAt: now, expiresAt }),
    );
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

  window.delete("/evidence/:id", async (c) => {
    const id = c.req.param("id");
    if (!evidenceId.test(id)) throw invalidRequest("An evidence id is 1 to 64 letters, digits, '_', '.' or '-'.", "id");
    await deps.store.deleteEvidence(await c.get("caller").principal(), id);
    return c.body(null, 204, { "x-promptgate-ref": c.get("ref") });
  });

  // PUT /sources/{id} with {"sources": ["D1", …]} → a source index that calls name with x-promptgate-sources.
  window.put("/sources/:id", async (c) => {
    const id = c.req.param("id");
    if (!sourceIndexId.test(id)) {
      throw invalidRequest("A source index id is 1 to 64 letters, digits, '_', '.' or '-'.", "id");
    }
    const sources = sourcesOf((await jsonBodyOf(deps, c)).sources);
    const now = deps.now().getTime();
    const principal = await c.get("caller").principal();
    const expiresAt = now + keptForMs;
    await quota.keep({ kind: "source_index", principal, id }, codePoints(JSON.stringify(sources)), now, () =>
      deps.store.putSourceIndex({ principal, id, sources, createdAt: now, expiresAt }),
    );
    const kept = { id, sources: sources.length, expires_at: new Date(expiresAt).toISOString() };
    return c.json(kept, 200, { "x-promptgate-ref": c.get("ref") });
  });

  window.delete("/sources/:id", async (c) => {
    const id = c.req.param("id");
    if (!sourceIndexId.test(id)) {
      throw invalidRequest("A source index id is 1 to 64 letters, digits, '_', '.' or '-'.", "id");
    }
    await deps.store.deleteSourceIndex(await c.get("caller").principal(), id);
    return c.body(null, 204, { "x-promptgate-ref": c.get("ref") });
  });

  // {"kind": "recall", "evidence_refs": ["E000001"], "page": 1} → that one page, recorded with the call.
  window.post("/recall", async (c) => {
    // Nothing is held and nothing secret is logged: the recorder only notes the recall's facts and keeps the record.
    const recorder = callRecorder(deps, recallRecord(deps, c.req.raw, c.get("ref")), {
      secrets: () => [],
      release: () => {},
    });
    try {
      const body = await jsonBodyOf(deps, c);
      const { evidence, page } = recallOf(body);
      recorder.noteRecall(evidence, page);
      const principal = await c.get("caller").principal();
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
      recorder.noteRecallPages(pages);
      const chosen = await pageOf(kept.text, kept.pageChars, page);
      if (chosen === undefined) {
        throw new GatewayError("PAGE_OUT_OF_RANGE", 400, `The evidence has ${pages} pages, numbered from 0.`, {
          param: "page",
        });
      }
      recorder.decide("answered");
      return c.json(chosen, 200, { "x-promptgate-ref": c.get("ref") });
    } catch (error) {
      if (GatewayError.isInstance(error)) recorder.noteFailure(error);
      throw error;
    } finally {
      await recorder.settle();
    }
  });
}

/** An evidence id: short, and safe to repeat in a record and a log line. */
const evidenceId = /^[A-Za-z0-9_.-]{1,64}$/;

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
