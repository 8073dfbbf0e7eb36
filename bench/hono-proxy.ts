// The bare proxy's work on promptgate's stack: a Hono app on @hono/node-server that reads the body whole
// (`arrayBuffer()`), forwards it with undici `request()` on a keep-alive Agent with the client's abort signal, and
// answers with the bytes in a `Response`, as promptgate does; no parsing and no checks. Beside the bare proxy it
// shows what the Web-standard framework costs by itself.
//
// With BENCH_FLOOR=1 it also does the floor's work, the least any gateway that keeps promptgate's promise does per
// call, and nothing else: it decodes and parses the request, decodes and parses the answer and the JSON text of its
// first message, and validates that with the validator of the request's response schema, compiled from the first
// call's schema and reused (a lookup that costs nothing). It answers the upstream's bytes whatever the outcome, and
// measures, records, logs and counts nothing.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Agent, request } from "undici";
import { ajvSchemaCompiling } from "../src/schema/compile-schema.js";
import { createSchemaValidators } from "../src/schema/schema-validators.js";

const upstream = process.env.BENCH_UPSTREAM ?? "";
// The same pool settings as promptgate's undici transport.
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256 });

/** The floor's checks of one call (BENCH_FLOOR=1): the request's bytes, then the answer's once they are read. */
const floorChecks = (() => {
  if (process.env.BENCH_FLOOR !== "1") return undefined;
  // Validation as the Node gateway validates (Ajv compiling), as the micro floor of `npm run bench` does.
  const validators = createSchemaValidators({ compiling: ajvSchemaCompiling() });
  const decoder = new TextDecoder();
  let validate: ((answer: unknown) => unknown) | undefined;
  return (requestBytes: Uint8Array) => {
    const call = JSON.parse(decoder.decode(requestBytes)) as {
      response_format?: { json_schema?: { schema?: unknown } };
    };
    validate ??= validators.validatorFor(call.response_format?.json_schema?.schema).validate;
    return (answerBytes: Uint8Array) => {
      const completion = JSON.parse(decoder.decode(answerBytes)) as {
        choices: Array<{ message: { content: string } }>;
      };
      return validate?.(JSON.parse(completion.choices[0]?.message.content ?? "null"));
    };
  };
})();

const app = new Hono();
app.all("/v1/*", async (c) => {
  try {
    const body = new Uint8Array(await c.req.raw.arrayBuffer());
    const checkAnswer = floorChecks?.(body);
    const answer = await request(`${upstream}${c.req.path}`, {
      method: c.req.method as "POST",
      headers: { "content-type": "application/json", authorization: c.req.header("authorization") ?? "" },
      body,
      signal: c.req.raw.signal,
      dispatcher: agent,
    });
    const contentType = answer.headers["content-type"];
    const answerBytes = new Uint8Array(await answer.body.arrayBuffer());
    checkAnswer?.(answerBytes);
    return new Response(answerBytes, {
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
