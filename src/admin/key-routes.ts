import { type Context, Hono } from "hono";
import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { renderPlainError } from "../errors/render-plain-error.js";
import type { RouteEnv } from "../http/route-env.js";
import { currentPolicyNames } from "../policy/policy-registry.js";
import {
  createKey,
  getKey,
  type KeyAdmin,
  KeyAdminError,
  type KeyLimitsContext,
  keyLimits,
  listKeys,
  revokeKey,
  rotateKey,
  updateKey,
} from "./key-admin.js";

/**
 * `/promptgate/admin/keys`: named keys made, listed, changed, revoked and rotated, and the use of their limits'
 * windows (mounted behind the admin key).
 */
export function keyRoutes(deps: Deps): Hono<RouteEnv> {
  const keys = new Hono<RouteEnv>();
  const admin: KeyAdmin = {
    store: deps.store,
    fileKeys: () => deps.keyRing.fileKeys(),
    now: () => deps.now().getTime(),
    settingsContext: () => ({
      policyNames: currentPolicyNames(deps.policies),
      providerNames: deps.surfaces.map((surface) => surface.name),
      credentialSet: (variable: string) => (deps.secretNamed(variable) ?? "") !== "",
    }),
  };
  const limits: KeyLimitsContext = {
    store: deps.store,
    policy: (name) => {
      try {
        return deps.policies.resolve(name).policy;
      } catch (error) {
        if (GatewayError.isInstance(error) && error.code === "POLICY_NOT_FOUND") return undefined;
        throw error;
      }
    },
    defaultPolicy: deps.config.defaultPolicy,
  };
  // A key changed here counts on this node at once; every other node sharing the store sees it within a second.
  keys.use(async (c, next) => {
    await next();
    if (c.req.method !== "GET") deps.keyRing.forgetStoreAnswers();
  });
  keys.post("/", (c) =>
    answer(c, async () => {
      const created = await createKey(admin, await jsonBody(c.req.raw, "required"));
      return c.json(created, 201, refHeader(c.get("ref")));
    }),
  );
  keys.get("/", (c) => answer(c, async () => c.json(await listKeys(admin), 200, refHeader(c.get("ref")))));
  keys.get("/:id", (c) =>
    answer(c, async () => c.json(await getKey(admin, c.req.param("id")), 200, refHeader(c.get("ref")))),
  );
  keys.get("/:id/limits", (c) =>
    answer(c, async () => c.json(await keyLimits(admin, c.req.param("id"), limits), 200, refHeader(c.get("ref")))),
  );
  keys.patch("/:id", (c) =>
    answer(c, async () => {
      const updated = await updateKey(admin, c.req.param("id"), await jsonBody(c.req.raw, "required"));
      return c.json(updated, 200, refHeader(c.get("ref")));
    }),
  );
  keys.delete("/:id", (c) =>
    answer(c, async () => c.json(await revokeKey(admin, c.req.param("id")), 200, refHeader(c.get("ref")))),
  );
  keys.post("/:id/rotate", (c) =>
    answer(c, async () => {
      const rotated = await rotateKey(admin, c.req.param("id"), await jsonBody(c.req.raw, "optional"));
      return c.json(rotated, 200, refHeader(c.get("ref")));
    }),
  );
  return keys;
}

/** A request's body as JSON; an empty one is undefined where the body is optional. */
async function jsonBody(request: Request, presence: "required" | "optional"): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") {
    if (presence === "optional") return undefined;
    throw new KeyAdminError("invalid", "The request needs a JSON object as its body.");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new KeyAdminError("invalid", "The request's body is not valid JSON.");
  }
}

/** Runs a key operation, its refusal rendered as the admin routes render errors. */
async function answer(c: Context<RouteEnv>, operation: () => Promise<Response>): Promise<Response> {
  try {
    return await operation();
  } catch (error) {
    if (!KeyAdminError.isInstance(error)) throw error;
    return refusal(error, c.get("ref"));
  }
}

function refusal(error: KeyAdminError, ref: string): Response {
  switch (error.failure) {
    case "invalid":
      return renderPlainError(invalidRequest(error.message, error.field), ref);
    case "not_found":
      return renderPlainError(new GatewayError("NOT_FOUND", 404, error.message), ref);
    case "read_only":
      return renderPlainError(new GatewayError("KEY_READ_ONLY", 409, error.message), ref);
    case "revoked":
      return renderPlainError(new GatewayError("KEY_REVOKED", 409, error.message), ref);
  }
}

function refHeader(ref: string): Record<string, string> {
  return { "x-promptgate-ref": ref };
}
