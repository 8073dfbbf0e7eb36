// The floor of what a Node proxy costs: node:http in, undici `request()` on a keep-alive Agent out,
// the body read whole and forwarded, the answer streamed back; no parsing and no checks.
import { createServer } from "node:http";
import { pipeline } from "node:stream/promises";
import { Agent, request } from "undici";

const upstream = process.env.BENCH_UPSTREAM ?? "";
// The same pool settings as promptgate's undici transport.
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256 });

const server = createServer(async (incoming, outgoing) => {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const answer = await request(`${upstream}${incoming.url ?? "/"}`, {
      method: incoming.method as "POST",
      headers: { "content-type": "application/json", authorization: incoming.headers.authorization ?? "" },
      body: Buffer.concat(chunks),
      dispatcher: agent,
    });
    const contentType = answer.headers["content-type"];
    outgoing.writeHead(answer.statusCode, typeof contentType === "string" ? { "content-type": contentType } : {});
    await pipeline(answer.body, outgoing);
  } catch {
    if (!outgoing.headersSent) outgoing.writeHead(502);
    outgoing.end();
  }
});
server.keepAliveTimeout = 120_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
