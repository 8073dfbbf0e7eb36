/**
 * What the gateway's Hono routes keep per request: its ref, read with `c.get("ref")`. Not `c.var.ref`: Hono's
 * `c.var` builds a new object of every variable on each read (`Object.fromEntries`), 0.7 % of a profile at one
 * connection when the call route read it so.
 */
export type RouteEnv = { Variables: { ref: string } };
