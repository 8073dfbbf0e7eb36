// The bare proxy's work on promptgate's stack: a Hono app on @hono/node-server that reads the body whole
// (`arrayBuffer()`), forwards it with undici `request()` on a keep-alive Agent with the client's abort signal, and
// answers with the bytes in a `Response`, as promptgate does; no parsing and no checks. Beside the bare proxy it
// shows what the Web-standard framework costs by itself.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Agent, request } from "undici";

const upstream = process.env.BENCH_UPSTREAM ?? "";
// The same pool settings as promptgate's undici transport.
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256 });

const app = new Hono();
app.all("/v1/*", async (c) => {
  try {
    const answer = await request(`${upstream}${c.req.path}`, {
      method: c.req.method as "POST",
      headers: { "content-type": "application/json", authorization: c.req.header("authorization") ?? "" },
      body: new Uint8Array(await c.req.raw.arrayBuffer()),
      signal: c.req.raw.signal,
      dispatcher: agent,
    });
    const contentType = answer.headers["content-type"];
    return new Response(new Uint8Array(await answer.body.arrayBuffer()), {
      status: answer.statusCode,
      headers: typeof contentType === "string" ? { "content-type": contentType } : {},
    });
  } catch {
    return new Response(null, { status: 502 });
  }
});

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: info.port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
