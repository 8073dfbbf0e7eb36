// The event loop of a gateway while large new response schemas arrive beside ordinary traffic: earlier builds spent
// ~0.5 s of synchronous compilation per new 180,000-character schema, and /healthz stalled for seconds. The
// gateway runs with bench/event-loop-probe.ts preloaded; the load test's call runs throughout, first alone
// (the baseline), then while 10 distinct schemas of 50,000–100,000 characters arrive one after another.
import { readFile } from "node:fs/promises";
import { investigationSchema } from "./fixtures.js";
import { runLoad, type Target } from "./load.js";

/** The event loop's delay over one window, from the probe, in ms. */
export interface LoopWindow {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

/** One window of the measurement: the loop's delay, and what the ordinary traffic saw. */
export interface EventLoopWindow {
  loop: LoopWindow;
  trafficRequestsPerSecond: number;
  trafficP99Ms: number;
  trafficFailed: number;
}

export interface EventLoopFigures {
  schemas: number;
  schemaChars: { min: number; max: number };
  connections: number;
  seconds: number;
  baseline: EventLoopWindow;
  withLargeSchemas: EventLoopWindow & {
    /** How many large-schema calls got each status. */
    statuses: Record<string, number>;
    /** The slowest large-schema call, ms. */
    slowestSchemaCallMs: number;
  };
}

/** A distinct schema of about `chars` characters: copies of the investigation schema, each with its own definitions. */
export function largeSchema(chars: number, salt: string): Record<string, unknown> {
  const { $schema: _dialect, $id: _id, $defs: definitions = {}, ...body } = investigationSchema;
  const properties: Record<string, unknown> = {};
  const $defs: Record<string, unknown> = {};
  const renamed = (value: unknown, copy: number) =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', `"#/$defs/c${copy}_`)) as Record<string, unknown>;
  for (let copy = 0; JSON.stringify({ properties, $defs }).length < chars; copy++) {
    properties[`part_${copy}`] = { ...renamed(body, copy), description: `${salt}, part ${copy}` };
    for (const [name, definition] of Object.entries(definitions as Record<string, unknown>)) {
      $defs[`c${copy}_${name}`] = renamed(definition, copy);
    }
  }
  return { type: "object", properties, $defs };
}

/** Reads the probe's window: signals the gateway and waits for its `line`-th report. */
async function loopWindow(pid: number, file: string, line: number): Promise<LoopWindow> {
  process.kill(pid, "SIGUSR2");
  for (let attempt = 0; attempt < 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const lines = (await readFile(file, "utf8").catch(() => "")).trim().split("\n");
    if (lines.length >= line && lines[line - 1] !== "") return JSON.parse(lines[line - 1] as string) as LoopWindow;
  }
  throw new Error("The event-loop probe did not report.");
}

/** Posts each schema in turn, spread over `seconds`, on the default policy's route (its window takes them). */
async function postSchemas(origin: string, schemas: readonly unknown[], seconds: number) {
  const statuses: Record<string, number> = {};
  let slowest = 0;
  const gap = (seconds * 1000 * 0.8) / schemas.length;
  for (const [index, schema] of schemas.entries()) {
    await new Promise((resolve) => setTimeout(resolve, index === 0 ? gap / 2 : gap));
    const started = performance.now();
    const response = await fetch(`${origin}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body: JSON.stringify({
        model: "gpt-bench",
        messages: [{ role: "user", content: "Fill in the large form." }],
        response_format: { type: "json_schema", json_schema: { name: `large_${index}`, schema } },
      }),
    });
    await response.arrayBuffer();
    slowest = Math.max(slowest, performance.now() - started);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
  return { statuses, slowestSchemaCallMs: slowest };
}

/** Measures the gateway (probe preloaded, writing to `loopFile`) at `connections` of the load test's call. */
export async function measureEventLoop(
  target: Target,
  origin: string,
  body: Buffer,
  options: { loopFile: string; upstreamPid: number; seconds: number; connections: number; salt: string },
): Promise<EventLoopFigures> {
  const { loopFile, upstreamPid, seconds, connections } = options;
  const schemas = Array.from({ length: 10 }, (_, index) =>
    largeSchema(50_000 + index * 5_000, `${options.salt} schema ${index}`),
  );
  const sizes = schemas.map((schema) => JSON.stringify(schema).length);
  await runLoad(target, body, connections, { seconds: 1 }, upstreamPid);
  await loopWindow(target.pid, loopFile, 1);
  const alone = await runLoad(target, body, connections, { seconds }, upstreamPid);
  const baselineLoop = await loopWindow(target.pid, loopFile, 2);
  const [beside, posted] = await Promise.all([
    runLoad(target, body, connections, { seconds }, upstreamPid),
    postSchemas(origin, schemas, seconds),
  ]);
  const withSchemasLoop = await loopWindow(target.pid, loopFile, 3);
  const window = (loop: LoopWindow, sample: typeof alone): EventLoopWindow => ({
    loop,
    trafficRequestsPerSecond: sample.requestsPerSecond,
    trafficP99Ms: sample.p99,
    trafficFailed: sample.failed,
  });
  return {
    schemas: schemas.length,
    schemaChars: { min: Math.min(...sizes), max: Math.max(...sizes) },
    connections,
    seconds,
    baseline: window(baselineLoop, alone),
    withLargeSchemas: { ...window(withSchemasLoop, beside), ...posted },
  };
}
