// The per-call costs that do not need a socket: measuring a request, counting code points, projecting the
// schema for Gemini, validating an answer. `npm run bench:micro` runs these alone; `npm run bench` runs them too.
import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";
import { createApp } from "../src/app.js";
import { nestsDeeperThan } from "../src/http/read-body.js";
import { JsonScanner } from "../src/json/json-scanner.js";
import { type ParsedCall, parseCall, prepareCall } from "../src/pipeline/prepare-call.js";
import { loadPolicies } from "../src/policy/load-policies.js";
import type { PolicyVersion } from "../src/policy/policy.js";
import { createNodeDeps, readPolicyFiles } from "../src/runtime/node/node-gateway.js";
import { ajvSchemaCompiling } from "../src/schema/compile-schema.js";
import { validateAnswer } from "../src/schema/diagnostics.js";
import { createSchemaValidators } from "../src/schema/schema-validators.js";
import { projectForGemini } from "../src/surfaces/gemini/projection/projection.js";
import { openaiSurface } from "../src/surfaces/openai/openai-surface.js";
import type { MeasuredEndpoint } from "../src/surfaces/surface.js";
import { codePoints } from "../src/window/code-points.js";
import { measure, noCachedPrefix } from "../src/window/prompt-size.js";
import {
  chatCompletion,
  chatRequest,
  chatRequestOfBytes,
  gatewayPath,
  investigationAnswer,
  investigationAnswerText,
  investigationSchema,
  prose,
  realisticMessageChars,
} from "./fixtures.js";

/** One microbenchmark's figures, in milliseconds per operation. */
export interface MicroResult {
  name: string;
  /** Input size in bytes, where the size is the point. */
  bytes?: number;
  mean: number;
  p50: number;
  p99: number;
  samples: number;
  /** Mean milliseconds per MiB of input, where `bytes` is given. */
  msPerMiB?: number;
  /** KiB allocated per run, collected objects included, where measured (the whole call and its harness). */
  allocatedKiB?: number;
}

const path = "/chat/completions";

/** The least any gateway that checks the load test's call must do: read its request, and read and validate its answer. */
export const loadRequestFloor = "floor: TextDecoder + JSON.parse alone, realistic call";
export const loadAnswerFloor = "floor: decode, parse and Ajv-validate the load test's answer";
const mebibyte = 1024 * 1024;

async function investigationPolicy(): Promise<PolicyVersion> {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const policySchema = JSON.parse(await readFile(`${root}schemas/policy.schema.json`, "utf8"));
  const policies = await loadPolicies(await readPolicyFiles(`${root}policies`), policySchema);
  return policies.resolve("investigation.bounded");
}

function chatEndpoint(): MeasuredEndpoint {
  const endpoint = openaiSurface.match("POST", path);
  if (endpoint === undefined || endpoint.kind !== "generate") throw new Error("No chat completions endpoint.");
  return endpoint;
}

interface TimingOptions {
  /** Milliseconds per task and pass (after a warm-up); at least `iterations` samples are taken. */
  time?: number;
  iterations?: number;
  bytes?: number;
}

/** The latency samples (ms) of one task run for about `time` ms after a warm-up. */
async function samplesOf(name: string, task: () => unknown, options: TimingOptions): Promise<readonly number[]> {
  const bench = new Bench({
    time: options.time ?? 1_000,
    iterations: options.iterations ?? 64,
    warmupIterations: 8,
    retainSamples: true,
  });
  bench.add(name, task);
  await bench.run();
  const result = bench.tasks[0]?.result;
  if (result === undefined || !("latency" in result) || result.latency.samples === undefined) {
    throw new Error(`${name} did not complete.`);
  }
  return result.latency.samples;
}

/** The figures of a task from its samples, pooled over every pass. */
function figuresOf(name: string, samples: readonly number[], bytes: number | undefined): MicroResult {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const figures: MicroResult = { name, mean, p50: at(0.5), p99: at(0.99), samples: sorted.length };
  if (bytes !== undefined) {
    figures.bytes = bytes;
    figures.msPerMiB = mean / (bytes / mebibyte);
  }
  return figures;
}

/** Runs one task for about `time` ms (at least `iterations` times) after a warm-up, and returns its figures. */
async function timed(name: string, task: () => unknown, options: TimingOptions = {}): Promise<MicroResult> {
  return figuresOf(name, await samplesOf(name, task, options), options.bytes);
}

/**
 * Runs several tasks in `passes` alternating passes and pools each task's samples, so that a burst of other work
 * on the machine lands on every task alike rather than on whichever ran at that moment.
 */
async function alternating(
  tasks: ReadonlyArray<{ name: string; task: () => unknown; options: TimingOptions }>,
  passes: number,
): Promise<MicroResult[]> {
  const pooled = tasks.map(() => [] as number[]);
  for (let pass = 0; pass < passes; pass++) {
    for (const [index, { name, task, options }] of tasks.entries()) {
      pooled[index]!.push(...(await samplesOf(name, task, options)));
    }
  }
  return tasks.map(({ name, options }, index) => figuresOf(name, pooled[index]!, options.bytes));
}

/** Every microbenchmark, in order; `log` hears each result as it is done. */
export async function runMicro(log: (result: MicroResult) => void = () => undefined): Promise<MicroResult[]> {
  // Validation as the Node gateway validates (Ajv compiling; bench/validators.ts compares it with the other ways).
  const validators = createSchemaValidators({ compiling: ajvSchemaCompiling() });
  // The scanner as the Node gateway runs it: with the body's UTF-8 checked natively.
  const scanner = new JsonScanner(isUtf8);
  const policy = await investigationPolicy();
  const endpoint = chatEndpoint();
  const results: MicroResult[] = [];
  const add = (result: MicroResult) => {
    results.push(result);
    log(result);
  };
  const context = { check: "preflight" as const, policy, cachedPrefix: noCachedPrefix };

  // Three sizes in alternating passes: their ratios are the linearity check.
  const sizes = [
    { label: "20 KB", bytes: 20 * 1024, time: 400, iterations: 32 },
    { label: "1 MB", bytes: mebibyte, time: 700, iterations: 16 },
    { label: "10 MB", bytes: 10 * mebibyte, time: 1_500, iterations: 5 },
  ];
  const sizeTasks = sizes.flatMap(({ label, bytes, time, iterations }) => {
    const body = chatRequestOfBytes(bytes);
    const parsed = parseCall(endpoint, body, path, policy, scanner);
    const options = { time, iterations, bytes: body.byteLength };
    return [
      {
        name: `parseCall + measure, ${label} request`,
        task: () => measure(parseCall(endpoint, body, path, policy, scanner).call, context),
        options,
      },
      {
        name: `measure alone (parsed call), ${label} request`,
        // A schema object of its own each time, as every request parses one: its compact JSON is built anew.
        task: () => measure({ ...parsed.call, responseSchema: { ...investigationSchema } }, context),
        options,
      },
    ];
  });
  for (const result of await alternating(sizeTasks, 3)) add(result);

  // What the 1 MB figure is made of: the floor any JSON gateway pays (decode and parse), and the depth scan.
  const megabyteBody = chatRequestOfBytes(mebibyte);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const megabyteText = decoder.decode(megabyteBody);
  add(
    await timed("floor: TextDecoder + JSON.parse alone, 1 MB request", () => JSON.parse(decoder.decode(megabyteBody)), {
      bytes: megabyteBody.byteLength,
    }),
  );
  add(
    await timed("nestsDeeperThan (depth guard) alone, 1 MB request", () => nestsDeeperThan(megabyteText, 512), {
      bytes: megabyteBody.byteLength,
    }),
  );

  const text = prose(mebibyte);
  add(await timed("codePoints, 1 MiB code units, no surrogates", () => codePoints(text), { bytes: text.length * 2 }));
  const withEmoji = `${text.slice(0, mebibyte - 2)}😀`.replace(/ the /g, " 😀 ");
  add(
    await timed("codePoints, 1 MiB code units, with surrogate pairs", () => codePoints(withEmoji), {
      bytes: withEmoji.length * 2,
    }),
  );

  const realistic = new TextEncoder().encode(JSON.stringify(chatRequest(realisticMessageChars)));
  add(
    await timed(loadRequestFloor, () => JSON.parse(decoder.decode(realistic)), {
      bytes: realistic.byteLength,
    }),
  );
  add(
    await timed(
      "parseCall + prepareCall (both checks), realistic call",
      () => {
        const parsed: ParsedCall = parseCall(endpoint, realistic, path, policy, scanner);
        return prepareCall(endpoint, parsed, path, policy, undefined, noCachedPrefix, validators);
      },
      { bytes: realistic.byteLength },
    ),
  );

  const wholeCallList = await wholeCallTasks(realistic);
  const wholeCallResults = await alternating(wholeCallList, 3);
  for (const [index, result] of wholeCallResults.entries()) {
    const task = wholeCallList[index]?.task;
    if (task !== undefined) result.allocatedKiB = await allocatedPerRun(task);
    add(result);
  }
  // The same work, each run after the process slept: what a call costs when calls do not follow each other closely
  // (one connection: the gateway waits for the client and the provider between calls).
  add(
    await afterIdle(`${loadRequestFloor}, ${idleMs} ms idle before each`, () => JSON.parse(decoder.decode(realistic))),
  );
  const whole = wholeCallList[0];
  if (whole !== undefined) add(await afterIdle(`whole call in process, ${idleMs} ms idle before each`, whole.task));

  let distinct = 0;
  // A description no earlier schema had makes the canonical JSON new, so every cache misses.
  const freshSchema = (): Record<string, unknown> => ({ ...investigationSchema, description: `cold ${distinct++}` });
  add(
    await timed("Gemini projection of v22, cold", () =>
      projectForGemini(freshSchema(), "nested", "responseJsonSchema"),
    ),
  );
  add(
    await timed("Gemini projection of v22, cached", () =>
      projectForGemini(investigationSchema, "nested", "responseJsonSchema"),
    ),
  );

  const answer = investigationAnswerText(10 * 1024);
  if (!validateAnswer(validators.validatorFor(investigationSchema), answer).valid)
    throw new Error("The 10 KB answer does not validate.");
  add(
    await timed(
      "validate 10 KB answer, cold (v22 has $id: own Ajv instance)",
      () => validateAnswer(validators.validatorFor(freshSchema()), answer),
      {
        time: 2_000,
        iterations: 16,
      },
    ),
  );
  const { $id: _id, ...withoutId } = investigationSchema;
  add(
    await timed(
      "validate 10 KB answer, cold, v22 without $id (shared Ajv)",
      () => validateAnswer(validators.validatorFor({ ...withoutId, description: `cold ${distinct++}` }), answer),
      { time: 2_000, iterations: 16 },
    ),
  );
  add(
    await timed("validate 10 KB answer, cached validator", () =>
      validateAnswer(validators.validatorFor(investigationSchema), answer),
    ),
  );
  // What the cached figure is made of: the cache lookup, parsing the answer, and Ajv's own check.
  add(
    await timed("  of which: validator lookup, same schema object", () => validators.validatorFor(investigationSchema)),
  );
  add(await timed("  of which: JSON.parse of the 10 KB answer", () => JSON.parse(answer)));
  const { validate } = validators.validatorFor(investigationSchema);
  const parsedAnswer: unknown = JSON.parse(answer);
  add(await timed("  of which: Ajv validate function alone", () => validate(parsedAnswer)));
  // The load test's answer (a 3.9 KB chat completion): what reading and validating it costs at the least.
  const loadAnswer = new TextEncoder().encode(
    JSON.stringify(chatCompletion(JSON.stringify(investigationAnswer(3, 300)))),
  );
  add(
    await timed(
      loadAnswerFloor,
      () => {
        const completion = JSON.parse(decoder.decode(loadAnswer)) as {
          choices: Array<{ message: { content: string } }>;
        };
        return validate(JSON.parse(completion.choices[0]?.message.content ?? "null"));
      },
      { bytes: loadAnswer.byteLength },
    ),
  );
  // A request's schema is a new object each time; its compact JSON (built once per call, for measuring) is the key.
  add(
    await timed("validator lookup, schema parsed anew (its compact JSON built here)", () =>
      validators.validatorFor({ ...investigationSchema }),
    ),
  );
  return results;
}

export const wholeCall = "whole call through the app in process, fake provider, realistic call";
export const wholeCallHarness = "  of which: building the Request and reading the Response (no app)";

/**
 * A whole call of the load test through the gateway's app, in this process: the Node runtime's deps (memory store,
 * metrics, the JSON log into a sink), a provider that answers at once with the load test's answer, and no socket.
 * The same steps as under load without the network and the HTTP server; the second task is what the harness itself
 * costs (a Request with the body, the Response read), so the difference is the gateway's own CPU per call.
 */
export async function wholeCallTasks(
  realistic: Uint8Array,
): Promise<Array<{ name: string; task: () => Promise<unknown>; options: TimingOptions }>> {
  const answer = new TextEncoder().encode(JSON.stringify(chatCompletion(JSON.stringify(investigationAnswer(3, 300)))));
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const deps = await createNodeDeps(
    {
      PROMPTGATE_DB: "memory",
      PROMPTGATE_UPSTREAM_OPENAI: "http://127.0.0.1:9/v1",
      PROMPTGATE_LOG_FORMAT: "json",
      OPENAI_API_KEY: "",
      PROMPTGATE_ADMIN_KEY: "",
    },
    { logDestination: sink },
  );
  deps.transport = async () => ({
    status: 200,
    headers: { "content-type": "application/json", "content-length": String(answer.byteLength) },
    bytes: async () => answer.slice(),
    stream: () => new Response(answer.slice()).body as ReadableStream<Uint8Array>,
  });
  const app = createApp(deps, { draining: () => false, metricsRoute: false });
  const request = () =>
    new Request(`http://127.0.0.1${gatewayPath}`, {
      method: "POST",
      headers: {
        authorization: "Bearer sk-bench",
        "content-type": "application/json",
        "content-length": String(realistic.byteLength),
      },
      body: realistic.slice(),
    });
  const options = { time: 1_000, iterations: 200, bytes: realistic.byteLength };
  // Each run ends its turn of the event loop, as a call on a server does: the work the gateway leaves for the turn's
  // end (the log line written, the metrics observed) is then in the call's figures, not piled up until the timing
  // loop yields. The harness ends its turn too, so that the difference is the gateway's.
  const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));
  return [
    {
      name: wholeCall,
      task: async () => {
        const response = await app.fetch(request());
        if (response.status !== 200) throw new Error(`The whole call answered ${response.status}.`);
        const read = await response.arrayBuffer();
        await turnEnd();
        return read;
      },
      options,
    },
    {
      name: wholeCallHarness,
      task: async () => {
        await request().arrayBuffer();
        const read = await new Response(answer.slice(), {
          headers: { "content-type": "application/json" },
        }).arrayBuffer();
        await turnEnd();
        return read;
      },
      options,
    },
  ];
}

/** How long the process sleeps before each run of `afterIdle`. */
const idleMs = 20;

/**
 * A task's time when each run follows `idleMs` of sleep, as a call does when calls do not follow each other closely.
 * On the virtual machine measured here, the same code then ran about three times as slow as back to back: caches,
 * and the CPU the process gets, are cold again. Compare with the task's back-to-back figure in the same run.
 */
async function afterIdle(name: string, task: () => unknown, runs = 200): Promise<MicroResult> {
  const samples: number[] = [];
  for (let run = 0; run < runs + 10; run++) {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const start = performance.now();
    await task();
    if (run >= 10) samples.push(performance.now() - start);
  }
  return figuresOf(name, samples, undefined);
}

/** A node of V8's sampling heap profile: a function with the bytes allocated in it and below it. */
export interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/**
 * V8's sampling heap profile of `runs` runs of a task (a sample every `interval` bytes on average), objects
 * collected since included. Unlike time, allocation does not move with the machine's load, so it shows a change of
 * a few per cent that the timings of a shared machine cannot.
 */
export async function allocationProfile(
  task: () => Promise<unknown>,
  runs: number,
  interval = 512,
): Promise<AllocationNode> {
  const session = new Session();
  session.connect();
  try {
    // Both flags are V8's (Node's typings lack them): without them, only what survives would be counted.
    const sampling = {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    };
    await session.post("HeapProfiler.startSampling", sampling);
    for (let run = 0; run < runs; run++) await task();
    const { profile } = await session.post("HeapProfiler.stopSampling");
    return profile.head as AllocationNode;
  } finally {
    session.disconnect();
  }
}

/** Every node of a sampling heap profile, `head` included, in no particular order. */
export function* allocationNodes(head: AllocationNode): Generator<AllocationNode> {
  const pending = [head];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    yield node;
    pending.push(...node.children);
  }
}

/** The KiB a task allocates per run (see `allocationProfile`). */
async function allocatedPerRun(task: () => Promise<unknown>, runs = 2_000): Promise<number> {
  let bytes = 0;
  for (const node of allocationNodes(await allocationProfile(task, runs))) bytes += node.selfSize;
  return bytes / runs / 1024;
}

/** A Markdown table of microbenchmark results. */
export function microTable(results: readonly MicroResult[]): string {
  const rows = results.map((result) => {
    const perMiB = result.msPerMiB === undefined ? "" : result.msPerMiB.toFixed(3);
    const size = result.bytes === undefined ? "" : formatBytes(result.bytes);
    const allocated = result.allocatedKiB === undefined ? "" : result.allocatedKiB.toFixed(1);
    return `| ${result.name} | ${size} | ${formatMs(result.mean)} | ${formatMs(result.p50)} | ${formatMs(result.p99)} | ${perMiB} | ${allocated} | ${result.samples} |`;
  });
  return [
    "| microbenchmark | input | mean ms | p50 ms | p99 ms | ms per MiB | KiB allocated | samples |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n");
}

function formatMs(ms: number): string {
  return ms < 0.1 ? ms.toFixed(4) : ms < 10 ? ms.toFixed(3) : ms.toFixed(1);
}

function formatBytes(bytes: number): string {
  return bytes >= mebibyte ? `${(bytes / mebibyte).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await runMicro((result) => process.stdout.write(`  ${result.name}: ${formatMs(result.mean)} ms\n`));
  process.stdout.write(`\n${microTable(results)}\n`);
}
