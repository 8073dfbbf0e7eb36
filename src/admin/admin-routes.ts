import { Hono } from "hono";
import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { renderPlainError } from "../errors/render-plain-error.js";
import { bearerToken, keysEqual } from "../http/keys.js";
import type { RouteEnv } from "../http/route-env.js";
import { scopedCase } from "../keys/key-bindings.js";
import type { PolicyReload } from "../policy/reload-policies.js";
import { callListingQuery } from "./call-listing-query.js";
import { keyRoutes } from "./key-routes.js";
import { policyReloadFailed, policyReloadResponse, policyReloadUnavailable } from "./policy-reload-response.js";
import { usageQuery } from "./usage-query.js";

/**
 * `/promptgate/admin/*`: the call record and the policy reload, behind `PROMPTGATE_ADMIN_KEY` as a bearer key.
 * Without a configured key the routes do not exist.
 */
/**
 * The refusal of a request without the admin key: 404 where none is configured (the routes do not exist), else 401
 * unless it presents the key as a bearer key; undefined for the operator.
 */
export async function adminRefusal(deps: Deps, request: Request, ref: string): Promise<Response | undefined> {
  const adminKey = deps.config.adminKey;
  if (adminKey === undefined) {
    return renderPlainError(new GatewayError("NOT_FOUND", 404, "There is no such route."), ref);
  }
  const presented = bearerToken(request.headers.get("authorization"));
  if (presented === undefined || !(await keysEqual(presented, adminKey))) {
    return renderPlainError(
      new GatewayError("authentication", 401, "A valid admin key is required.", {
        headers: { "www-authenticate": "Bearer" },
      }),
      ref,
    );
  }
  return undefined;
}

export function adminRoutes(deps: Deps): Hono<RouteEnv> {
  const admin = new Hono<RouteEnv>();
  admin.use(async function requireAdminKey(c, next) {
    const refused = await adminRefusal(deps, c.req.raw, c.get("ref"));
    if (refused !== undefined) return refused;
    await next();
  });
  admin.get("/calls", async (c) => {
    let query: ReturnType<typeof callListingQuery>;
    try {
      query = callListingQuery(new URL(c.req.url).searchParams);
    } catch (error) {
      if (!GatewayError.isInstance(error)) throw error;
      return renderPlainError(error, c.get("ref"));
    }
    const page = await deps.store.listCalls(query);
    if (page === undefined) {
      const cursor = query.order === "newest" ? "before" : "after";
      const message = `The query parameter '${cursor}' names no call the gateway holds.`;
      return renderPlainError(invalidRequest(message, cursor), c.get("ref"));
    }
    const next = page.more ? (page.calls.at(-1)?.ref ?? null) : null;
    return c.json({ calls: page.calls, next }, 200, { "x-promptgate-ref": c.get("ref") });
  });
  admin.get("/usage", async (c) => {
    let query: ReturnType<typeof usageQuery>;
    try {
      query = usageQuery(new URL(c.req.url).searchParams, deps.now());
    } catch (error) {
      if (!GatewayError.isInstance(error)) throw error;
      return renderPlainError(error, c.get("ref"));
    }
    return c.json({ data: await deps.store.usage(query) }, 200, refHeader(c.get("ref")));
  });
  admin.post("/policies/reload", async (c) => {
    if (new URL(c.req.url).search !== "") {
      return renderPlainError(invalidRequest("The policy reload takes no query parameters."), c.get("ref"));
    }
    if (deps.reloadPolicies === undefined) return policyReloadUnavailable(c.get("ref"));
    let outcome: PolicyReload;
    try {
      outcome = await deps.reloadPolicies("POST /promptgate/admin/policies/reload");
    } catch {
      return policyReloadFailed(c.get("ref"));
    }
    return policyReloadResponse(outcome, c.get("ref"));
  });
  // A case's frozen policy versions and invalid answers, by policy name; the reset of the invalid-answer cap. A named
  // key's cases are its own: `?key=ID` names them.
  admin.get("/cases/:case", async (c) =>
    c.json(await caseState(deps, c.req.param("case"), c.req.query("key")), 200, refHeader(c.get("ref"))),
  );
  admin.delete("/cases/:case/invalid-answers", async (c) => {
    const key = c.req.query("key");
    await deps.store.resetInvalidAnswers(scopedCase(key, c.req.param("case")));
    return c.json(await caseState(deps, c.req.param("case"), key), 200, refHeader(c.get("ref")));
  });
  admin.get("/calls/:ref", async (c) => {
    const call = await deps.store.getCall(c.req.param("ref"));
    if (call === undefined) {
      return renderPlainError(new GatewayError("NOT_FOUND", 404, "No call has this ref."), c.get("ref"));
    }
    return c.json(call, 200, { "x-promptgate-ref": c.get("ref") });
  });
  admin.route("/keys", keyRoutes(deps));
  return admin;
}

function refHeader(ref: string): Record<string, string> {
  return { "x-promptgate-ref": ref };
}

/** What the store holds of a case: per policy name, the frozen version's sha256 and the invalid answers counted. */
async function caseState(deps: Deps, caseId: string, keyId: string | undefined) {
  const freezes = await deps.store.listCaseFreezes(scopedCase(keyId, caseId));
  return {
    case: caseId,
    key: keyId ?? null,
    policies: freezes.map((frozen) => ({
      name: frozen.name,
      sha256: frozen.sha256,
      invalid_answers: frozen.invalidAnswers,
    })),
  };
}
