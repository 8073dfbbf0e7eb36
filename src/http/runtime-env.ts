/**
 * What a runtime put in the app's env (Hono's `c.env`) under `key`, or undefined: the env is whatever the runtime
 * passes (Workers' bindings, @hono/node-server's `incoming`/`outgoing`), so it is looked at only through symbols.
 */
export function givenByRuntime<T>(env: unknown, key: symbol): T | undefined {
  return typeof env === "object" && env !== null ? (env as Record<symbol, T | undefined>)[key] : undefined;
}
