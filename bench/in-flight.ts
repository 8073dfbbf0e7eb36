/*
 * What a call holds while it waits for the provider: `npm run bench:in-flight -- [--calls N] [--warm-up W]`. Starts
 * the compiled gateway (dist/, `npm start`'s Node options) against an upstream in this process that can hold its
 * answers, sends W calls to warm it, takes a heap snapshot, then holds N calls (default 64, as the load test's
 * connections) at the upstream and takes another. The objects new in the second snapshot, divided by N, are what a
 * call in flight holds; a scavenge copies them whenever one runs while calls wait. Unlike a timing, these bytes do not
 * move with the machine's load. An upper bound: objects the process made between the snapshots for other reasons
 * (a module loaded, a connection opened) count too.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { chatCompletion, chatRequest, gatewayPath, investigationAnswer, realisticMessageChars } from "./fixtures.js";
import { gatewayEnvironment, gatewayNodeOptions, promptgateListening, startProcess, wholeCount } from "./processes.js";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "64" }, "warm-up": { type: "string", default: "5000" } },
});
const held = wholeCount("calls", values.calls);
const warmUp = wholeCount("warm-up", values["warm-up"]);
const root = join(import.meta.dirname, "..");

// The upstream: answers at once, or, while `holding`, keeps each answer in `waiting` until the snapshot is taken.
const answer = Buffer.from(JSON.stringify(chatCompletion(JSON.stringify(investigationAnswer(3, 300)))));
const answerHeaders = { "content-type": "application/json", "content-length": String(answer.byteLength) };
const waiting: ServerResponse[] = [];
let holding = false;
const upstream = createServer((incoming, response) => {
  incoming.resume();
  incoming.on("end", () => (holding ? waiting.push(response) : response.writeHead(200, answerHeaders).end(answer)));
});
upstream.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const upstreamPort = (upstream.address() as { port: number }).port;

const snapshots = mkdtempSync(join(tmpdir(), "promptgate-in-flight-"));
const gateway = await startProcess(
  [
    ...gatewayNodeOptions,
    "--heapsnapshot-signal=SIGUSR2",
    `--diagnostic-dir=${snapshots}`,
    "dist/runtime/node/main.js",
  ],
  { ...gatewayEnvironment(`http://127.0.0.1:${upstreamPort}`), PROMPTGATE_LOG: "silent" },
  promptgateListening,
  { cwd: root },
);
const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));
const client = new Agent({ connections: held });
const url = `http://127.0.0.1:${gateway.port}${gatewayPath}`;

async function call(): Promise<void> {
  const response = await request(url, {
    method: "POST",
    body,
    headers: { authorization: "Bearer sk-bench", "content-type": "application/json" },
    dispatcher: client,
  });
  await response.body.arrayBuffer();
  if (response.statusCode !== 200) throw new Error(`The gateway answered ${response.statusCode}.`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signals the gateway to write a heap snapshot and resolves with its path once the file stops growing. */
async function snapshot(): Promise<string> {
  const before = new Set(readdirSync(snapshots));
  process.kill(gateway.process.pid, "SIGUSR2");
  for (let size = -1; ; await sleep(250)) {
    const file = readdirSync(snapshots).find((name) => name.endsWith(".heapsnapshot") && !before.has(name));
    if (file === undefined) continue;
    const path = join(snapshots, file);
    const now = statSync(path).size;
    // V8 writes the snapshot as JSON and ends it with its strings' closing bracket.
    if (now === size && now > 0 && readFileSync(path, "utf8").trimEnd().endsWith("]}")) return path;
    size = now;
  }
}

/** A heap snapshot's nodes, by the fields this tool reads. */
interface HeapNodes {
  count: number;
  type: (node: number) => string;
  name: (node: number) => string;
  id: (node: number) => number;
  size: (node: number) => number;
  /** The name of the function a suspended async function (a `Generator`) runs. */
  functionOf: (node: number) => string | undefined;
}

function heapNodes(path: string): HeapNodes {
  const { snapshot, nodes, edges, strings } = JSON.parse(readFileSync(path, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const fields = snapshot.meta.node_fields;
  const width = fields.length;
  const edgeWidth = snapshot.meta.edge_fields.length;
  const [type, name, id, size, edgeCount] = ["type", "name", "id", "self_size", "edge_count"].map((field) =>
    fields.indexOf(field),
  ) as [number, number, number, number, number];
  const [edgeName, edgeTo] = ["name_or_index", "to_node"].map((field) => snapshot.meta.edge_fields.indexOf(field)) as [
    number,
    number,
  ];
  const count = nodes.length / width;
  const firstEdge = new Int32Array(count);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += (nodes[node * width + edgeCount] as number) * edgeWidth;
  }
  const field = (node: number, at: number) => nodes[node * width + at] as number;
  return {
    count,
    type: (node) => snapshot.meta.node_types[0][field(node, type)] as string,
    name: (node) => strings[field(node, name)] as string,
    id: (node) => field(node, id),
    size: (node) => field(node, size),
    functionOf(node) {
      const start = firstEdge[node] as number;
      for (let edge = start; edge < start + field(node, edgeCount) * edgeWidth; edge += edgeWidth) {
        if (strings[edges[edge + edgeName] as number] !== "function") continue;
        return strings[field((edges[edge + edgeTo] as number) / width, name)] || "(anonymous)";
      }
      return undefined;
    },
  };
}

let before: string;
let during: string;
try {
  for (let sent = 0; sent < warmUp; sent += held) await Promise.all(Array.from({ length: held }, call));
  before = await snapshot();
  holding = true;
  const calls = Array.from({ length: held }, call);
  while (waiting.length < held) await sleep(20);
  during = await snapshot();
  holding = false;
  for (const response of waiting.splice(0)) response.writeHead(200, answerHeaders).end(answer);
  await Promise.all(calls);
} finally {
  await gateway.process.stop();
  upstream.close();
  await client.close();
}

const known = new Set<number>();
const first = heapNodes(before);
for (let node = 0; node < first.count; node++) known.add(first.id(node));
const second = heapNodes(during);
const kinds = new Map<string, { objects: number; bytes: number }>();
const suspended = new Map<string, number>();
let heapBytes = 0;
let heapObjects = 0;
let outsideBytes = 0;
for (let node = 0; node < second.count; node++) {
  if (known.has(second.id(node))) continue;
  const type = second.type(node);
  const name = second.name(node);
  if (type === "native" || type === "synthetic") {
    if (name === "system / JSArrayBufferData") outsideBytes += second.size(node);
    continue;
  }
  heapBytes += second.size(node);
  heapObjects += 1;
  const kind = type.endsWith("string") ? "strings" : type === "object" || type === "hidden" ? name : type;
  const entry = kinds.get(kind) ?? { objects: 0, bytes: 0 };
  entry.objects += 1;
  entry.bytes += second.size(node);
  kinds.set(kind, entry);
  if (type === "object" && name === "Generator") {
    const fn = second.functionOf(node) ?? "(unknown)";
    suspended.set(fn, (suspended.get(fn) ?? 0) + 1);
  }
}
rmSync(snapshots, { recursive: true, force: true });

const perCall = (value: number) => (value / held).toFixed(value / held < 10 ? 1 : 0);
const lines = [
  `${held} calls held at the provider after ${warmUp} calls of warm-up; per call in flight:`,
  `  on V8's heap ${perCall(heapBytes)} bytes in ${perCall(heapObjects)} objects; array-buffer memory outside it ${perCall(outsideBytes)} bytes`,
  "",
  "| kind (constructor or V8 type) | bytes per call | objects per call |",
  "|---|---:|---:|",
  ...[...kinds]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 20)
    .map(([kind, { objects, bytes }]) => `| \`${kind}\` | ${perCall(bytes)} | ${perCall(objects)} |`),
  "",
  `Async functions suspended per call (${perCall([...suspended.values()].reduce((a, b) => a + b, 0))}):`,
  ...[...suspended].sort((a, b) => b[1] - a[1]).map(([fn, count]) => `  ${perCall(count)} × ${fn}`),
];
process.stdout.write(`${lines.join("\n")}\n`);
