import { Hono } from "hono";
import type { Deps } from "./deps.js";
import { GatewayError, invalidRequest } from "./errors/gateway-error.js";
import { renderPlainError } from "./errors/render-plain-error.js";
import { bearerToken, keysEqual } from "./http/keys.js";

type Env = { Variables: { ref: string } };

const maxListed = 1000;

/**
 * `/promptgate/admin/*`: the call record, behind `PROMPTGATE_ADMIN_KEY` as a bearer key.
 * Without a configured key the routes do not exist.
 */
export function adminRoutes(deps: Deps): Hono<Env> {
  const admin = new Hono<Env>();
  admin.use(async function requireAdminKey(c, next) {
    const adminKey = deps.config.adminKey;
    if (adminKey === undefined) {
      return renderPlainError(new GatewayError("NOT_FOUND", 404, "There is no such route."), c.var.ref);
    }
    const presented = bearerToken(c.req.header("authorization") ?? null);
    if (presented === undefined || !(await keysEqual(presented, adminKey))) {
      return renderPlainError(
        new GatewayError("authentication", 401, "A valid admin key is required.", {
          headers: { "www-authenticate": "Bearer" },
        }),
        c.var.ref,
      );
    }
    await next();
  });
  admin.get("/calls", async (c) => {
    const caseId = c.req.query("case");
    if (caseId === undefined || caseId === "") {
      return renderPlainError(invalidRequest("The query parameter 'case' is required.", "case"), c.var.ref);
    }
    const calls = await deps.store.listCallsOfCase(caseId, maxListed);
    return c.json({ calls }, 200, { "x-promptgate-ref": c.var.ref });
  });
  admin.get("/calls/:ref", async (c) => {
    const call = await deps.store.getCall(c.req.param("ref"));
    if (call === undefined) {
      return renderPlainError(new GatewayError("NOT_FOUND", 404, "No call has this ref."), c.var.ref);
    }
    return c.json(call, 200, { "x-promptgate-ref": c.var.ref });
  });
  return admin;
}
