import { type Context, Hono, type MiddlewareHandler } from "hono";
import { adminRefusal, adminRoutes } from "./admin/admin-routes.js";
import { selfTest } from "./admin/self-test.js";
import { dashboardHtml, dashboardScript } from "./dashboard/dashboard-page.js";
import type { Deps } from "./deps.js";
import { GatewayError } from "./errors/gateway-error.js";
import { renderPlainError } from "./errors/render-plain-error.js";
import { type AbortNotice, clientNoticeOf } from "./http/abort-notice.js";
import { browserAccess, browserRequestHeaders } from "./http/cors.js";
import { type BodyReader, bodyReaderOf } from "./http/read-body.js";
import type { RouteEnv } from "./http/route-env.js";
import { type SurfaceRoute, surfaceRoute } from "./http/route-path.js";
import { handleSurfaceRequest } from "./pipeline/handle-surface-request.js";
import { callSecrets } from "./pipeline/upstream-call.js";
import { logInternalError } from "./pipeline/write-log.js";
import type { PolicyVersion } from "./policy/policy.js";
import type { Surface } from "./surfaces/surface.js";
import { surfaces } from "./surfaces/surfaces.js";
import { windowRoutes } from "./window-http/window-routes.js";

/** What a runtime tells the app besides `deps`. */
export interface AppOptions {
  /** Whether the runtime is shutting down: `/readyz` then answers 503 so that balancers send no more calls. */
  draining?: () => boolean;
  /** false when `/metrics` is served on a port of its own (`metricsApp`), not beside the calls. */
  metricsRoute?: boolean;
}

/** How long the deep readiness check waits for each provider's job. */
const selfTestTimeoutMs = 60_000;

/** The gateway as a Hono app; it imports nothing of any runtime, which enters through `deps`. */
export function createApp(deps: Deps, options: AppOptions = {}): Hono<RouteEnv> {
  const app = new Hono<RouteEnv>();

  app.use(assignRef(deps));

  if (deps.config.corsOrigins !== undefined) {
    // Before every route, so that a preflight (which carries no key) is answered before the key check. The admin
    // routes stay same-origin: an operator's key has no business in a web page.
    const access = browserAccess(deps.config.corsOrigins, browserRequestHeaders(deps.surfaces));
    for (const path of ["/healthz", "/readyz", "/promptgate/policies"]) app.use(path, access);
    for (const surface of surfaces) {
      app.use(`${surface.mount}/*`, access);
      app.use(`/policies/:policyRef${surface.mount}/*`, access);
    }
  }

  app.get("/healthz", (c) => c.json({ status: "ok" }, 200, { "x-promptgate-ref": c.get("ref") }));
  // Liveness stays /healthz: a draining gateway is alive (it is finishing calls) but takes no new ones.
  app.get("/readyz", async (c) => {
    const headers = { "x-promptgate-ref": c.get("ref") };
    if (options.draining?.()) return c.json({ status: "draining" }, 503, headers);
    if ((await deps.store.reachable?.()) === false) return c.json({ status: "store_unreachable" }, 503, headers);
    if (c.req.query("deep") === undefined) return c.json({ status: "ready" }, 200, headers);
    // The release check: one synthetic answer job per provider, end to end; the operator's, as it calls providers.
    const refused = await adminRefusal(deps, c.req.raw, c.get("ref"));
    if (refused !== undefined) return refused;
    // A provider the simulated one answered fails the check, unless `simulated` is asked for (as `selftest --simulated`).
    const simulatedPasses = c.req.query("simulated") !== undefined;
    const report = await selfTest(deps, async (request) => app.fetch(request), {
      timeoutMs: selfTestTimeoutMs,
      simulatedPasses,
    });
    return c.json({ status: report.pass ? "ready" : "failing", ...report }, report.pass ? 200 : 503, headers);
  });

  if (options.metricsRoute !== false) app.get("/metrics", metricsHandler(deps));

  // The dashboard: a static page holding no data; its script reads the records from the admin API with the admin key.
  const dashboardHeaders = (c: Context<RouteEnv>, type: string) => ({
    "content-type": type,
    "content-security-policy":
      "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-promptgate-ref": c.get("ref"),
  });
  app.get("/promptgate/dashboard", (c) => c.body(dashboardHtml, 200, dashboardHeaders(c, "text/html; charset=utf-8")));
  app.get("/promptgate/dashboard.js", (c) =>
    c.body(dashboardScript, 200, dashboardHeaders(c, "text/javascript; charset=utf-8")),
  );

  app.get("/promptgate/policies", (c) =>
    c.json({ policies: deps.policies.list().map((version) => describePolicy(deps, version)) }, 200, {
      "x-promptgate-ref": c.get("ref"),
    }),
  );

  app.route("/promptgate/admin", adminRoutes(deps));
  app.route("/promptgate/window", windowRoutes(deps));

  for (const surface of surfaces) {
    const route = (c: Context<RouteEnv>) =>
      routeToSurface(deps, surface, c.req.raw, {
        client: clientNoticeOf(c.env, c.req.raw),
        body: bodyReaderOf(c.env, c.req.raw),
        ref: c.get("ref"),
      });
    app.all(`${surface.mount}/*`, route);
    app.all(`/policies/:policyRef${surface.mount}/*`, route);
  }

  app.notFound((c) => renderPlainError(new GatewayError("NOT_FOUND", 404, "There is no such route."), c.get("ref")));
  app.onError((error, c) => {
    // A failure no call's handling caught (an admin route, the store behind it): logged with its stack.
    logInternalError(
      deps,
      c.get("ref"),
      error,
      "app",
      callSecrets(deps.config, surfaces, c.req.raw, new URL(c.req.url)),
    );
    return renderPlainError(
      new GatewayError("internal", 500, "The gateway failed to handle this request."),
      c.get("ref"),
    );
  });
  return app;
}

/**
 * Hands a request to its surface with the route read from the raw URL, not from Hono's decoded
 * path (which turns `%5C` into a `\` that the upstream URL parser would resolve). A path that is no
 * route of the surface is refused by the surface itself, natively and on the record, after its key.
 */
function routeToSurface(
  deps: Deps,
  surface: Surface,
  request: Request,
  { client, body, ref }: { client: AbortNotice; body: BodyReader; ref: string },
): Promise<Response> {
  let route: SurfaceRoute = { path: "", policyRef: undefined };
  let refusal: GatewayError | undefined;
  const url = new URL(request.url);
  try {
    route = surfaceRoute(url.pathname, surface.mount);
  } catch (error) {
    if (!GatewayError.isInstance(error)) throw error;
    refusal = error;
  }
  return handleSurfaceRequest(deps, {
    surface,
    request,
    client,
    body,
    url,
    path: route.path,
    policyRef: route.policyRef,
    ref,
    refusal,
  });
}

/** A policy version as `GET /promptgate/policies` lists it; `current` is what its plain name resolves to. */
function describePolicy(deps: Deps, version: PolicyVersion) {
  const current = deps.policies.resolve(version.policy.name) === version;
  return { ref: version.ref, sha256: version.sha256, name: version.policy.name, current, policy: version.policy };
}

/**
 * `GET /metrics`: the runtime's Prometheus metrics, behind the admin key unless the operator made them public; where
 * the runtime keeps none (Workers), no such route.
 */
function metricsHandler(deps: Deps) {
  return async (c: Context<RouteEnv>) => {
    const metrics = deps.metrics;
    if (metrics === undefined) {
      return renderPlainError(new GatewayError("NOT_FOUND", 404, "There is no such route."), c.get("ref"));
    }
    if (!metrics.public) {
      const refused = await adminRefusal(deps, c.req.raw, c.get("ref"));
      if (refused !== undefined) return refused;
    }
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { "content-type": contentType, "x-promptgate-ref": c.get("ref") });
  };
}

/**
 * Gives every request its `ref` before anything else runs. Not an async function: it hands back the rest of the
 * chain's promise, so that a call waiting for its provider holds no suspended frame of it.
 */
function assignRef(deps: Deps): MiddlewareHandler<RouteEnv> {
  return function assignRef(c, next) {
    c.set("ref", deps.newRef());
    return next();
  };
}

/** `/metrics` alone, for a port of its own (`PROMPTGATE_METRICS_PORT`). */
export function metricsApp(deps: Deps): Hono<RouteEnv> {
  const app = new Hono<RouteEnv>();
  app.use(assignRef(deps));
  app.get("/metrics", metricsHandler(deps));
  return app;
}
