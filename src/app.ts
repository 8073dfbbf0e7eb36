import { Hono } from "hono";
import { adminRoutes } from "./admin-routes.js";
import type { Deps } from "./deps.js";
import { GatewayError } from "./errors/gateway-error.js";
import { renderPlainError } from "./errors/render-plain-error.js";
import { handleSurfaceRequest } from "./pipeline/handle-surface-request.js";
import type { PolicyVersion } from "./policy/policy.js";
import type { Surface } from "./surfaces/surface.js";
import { surfaces } from "./surfaces/surfaces.js";

type Env = { Variables: { ref: string } };

/** The gateway as a Hono app; it imports nothing of any runtime, which enters through `deps`. */
export function createApp(deps: Deps): Hono<Env> {
  const app = new Hono<Env>();

  app.use(async function assignRef(c, next) {
    c.set("ref", deps.newRef());
    await next();
  });

  app.get("/healthz", (c) => c.json({ status: "ok" }, 200, { "x-promptgate-ref": c.var.ref }));

  app.get("/promptgate/policies", (c) =>
    c.json({ policies: deps.policies.list().map((version) => describePolicy(deps, version)) }, 200, {
      "x-promptgate-ref": c.var.ref,
    }),
  );

  app.route("/promptgate/admin", adminRoutes(deps));

  for (const surface of surfaces) {
    app.all(`${surface.mount}/*`, (c) =>
      handleSurfaceRequest(deps, {
        surface,
        request: c.req.raw,
        path: c.req.path.slice(surface.mount.length),
        policyRef: undefined,
        ref: c.var.ref,
      }),
    );
    app.all(`/policies/:policyRef${surface.mount}/*`, (c) => {
      const policyRef = c.req.param("policyRef");
      return handleSurfaceRequest(deps, {
        surface,
        request: c.req.raw,
        path: pathBelowPinnedMount(c.req.path, surface),
        policyRef,
        ref: c.var.ref,
      });
    });
  }

  app.notFound((c) => renderPlainError(new GatewayError("NOT_FOUND", 404, "There is no such route."), c.var.ref));
  app.onError((_error, c) =>
    renderPlainError(new GatewayError("internal", 500, "The gateway failed to handle this request."), c.var.ref),
  );
  return app;
}

/** The route path after `/policies/{ref}{mount}`. */
function pathBelowPinnedMount(path: string, surface: Surface): string {
  const afterPolicy = path.indexOf("/", "/policies/".length);
  return path.slice(afterPolicy + surface.mount.length);
}

/** A policy version as `GET /promptgate/policies` lists it; `current` is what its plain name resolves to. */
function describePolicy(deps: Deps, version: PolicyVersion) {
  const current = deps.policies.resolve(version.policy.name) === version;
  return { ref: version.ref, sha256: version.sha256, name: version.policy.name, current, policy: version.policy };
}
