import { Hono } from "hono";
import type { Deps } from "./deps.js";
import { GatewayError, invalidRequest } from "./errors/gateway-error.js";
import { renderPlainError } from "./errors/render-plain-error.js";
import { bearerToken } from "./http/keys.js";
import { parseJsonBody, readCappedBody } from "./http/read-body.js";
import { isGatewayKey } from "./pipeline/authorize-call.js";
import { isObject } from "./surfaces/wire-fields.js";
import { fragment, maxPageChars } from "./window/fragment.js";

type Env = { Variables: { ref: string } };

/**
 * `/promptgate/window/*`: the window toolkit over HTTP, for controllers in any language (JSON in, JSON out, errors in
 * promptgate's plain shape). With gateway keys configured, a request presents one as a bearer key, as on the APIs.
 */
export function windowRoutes(deps: Deps): Hono<Env> {
  const window = new Hono<Env>();
  window.use(async function requireGatewayKey(c, next) {
    if (!(await isGatewayKey(deps.config, bearerToken(c.req.header("authorization") ?? null)))) {
      return renderPlainError(new GatewayError("authentication", 401, "A valid gateway key is required."), c.var.ref);
    }
    await next();
  });
  window.onError((error, c) => {
    if (!GatewayError.isInstance(error)) throw error;
    return renderPlainError(error, c.var.ref);
  });

  // {"value": …, "page_chars": 1600} → {"fragments": [json_fragment, …]}
  window.post("/fragment", async (c) => {
    const { body } = parseJsonBody(await readCappedBody(c.req.raw, deps.config.maxBodyBytes));
    if (!isObject(body) || !("value" in body)) {
      throw invalidRequest("The body must be a JSON object with the value to cut into pages under 'value'.", "value");
    }
    const pageChars = body.page_chars ?? undefined;
    if (
      pageChars !== undefined &&
      (!Number.isInteger(pageChars) || (pageChars as number) < 1 || (pageChars as number) > maxPageChars)
    ) {
      throw invalidRequest(`'page_chars' must be a whole number from 1 to ${maxPageChars}.`, "page_chars");
    }
    const fragments = await fragment(body.value, pageChars === undefined ? {} : { pageChars: pageChars as number });
    return c.json({ fragments }, 200, { "x-promptgate-ref": c.var.ref });
  });
  return window;
}
