import { Worker } from "node:worker_threads";
import { compactJson } from "../../json/compact-json.js";
import { ajvValidate } from "../../schema/ajv-validate.js";
import type { CompiledValidator, SchemaDialect } from "../../schema/compiled-validator.js";
import type { SchemaRefusal } from "../../schema/schema-refusals.js";
import type { SchemaCompiler } from "../../schema/schema-validators.js";
import { instantiateValidator } from "./standalone-validator.js";
import { terminateOutsideLock, terminationLock } from "./termination-lock.js";

/** One schema to compile, as compact JSON (built once per schema object already, and cheap to send). */
export interface CompileJob {
  id: number;
  text: string;
}

/** What the worker answers a job with: why the schema is refused, standalone code to instantiate, or neither. */
export type CompileResult =
  | { id: number; refusal: SchemaRefusal }
  /** Compiled, but Ajv cannot write it out as standalone code: the serving thread compiles it itself. */
  | { id: number; unsupported: true }
  /** The code, V8's cache of it, and the schema as compiled (as JSON: cheaper to send than the objects). */
  | { id: number; source: string; cachedData: Uint8Array<ArrayBuffer>; schemaText: string; dialect: SchemaDialect };

export interface WorkerSchemaCompilerOptions {
  /** How long one schema may take to compile before it is refused as too complex (default 30 s). */
  timeoutMs?: number;
  /** The worker's heap limit; a schema that exhausts it is refused as too complex (default 1 GiB). */
  maxHeapMiB?: number;
}

interface Waiting {
  job: CompileJob;
  resolve: (outcome: CompiledValidator | { refusal: SchemaRefusal }) => void;
  reject: (error: Error) => void;
}

/**
 * Compiles response schemas one at a time in a worker thread, started on first use; it keeps the process alive
 * only while a schema is compiling. A schema that runs out of time or memory there is refused as too complex; if
 * the worker cannot start, `compile` rejects and the gateway compiles on its own thread as before.
 */
export function workerSchemaCompiler(options: WorkerSchemaCompilerOptions = {}): SchemaCompiler & {
  close(): Promise<void>;
} {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const queue: Waiting[] = [];
  let worker: Worker | undefined;
  let ready = false;
  // Each worker's termination lock: it holds it while V8 compiles the validator's code (see termination-lock.ts).
  const locks = new WeakMap<Worker, Int32Array>();
  const terminate = (thread: Worker) => terminateOutsideLock(thread, locks.get(thread) as Int32Array);
  let running: { waiting: Waiting; timer: NodeJS.Timeout } | undefined;
  let nextId = 1;

  // The worker holds the process only while it has work: a caller awaiting a compile (a CLI command with nothing
  // else open) is not cut off, and an idle worker does not keep a finished process alive.
  const next = (): void => {
    if (running !== undefined) return;
    if (queue.length === 0) {
      worker?.unref();
      return;
    }
    const current = worker ?? start();
    current.ref();
    if (!ready) return;
    const waiting = queue.shift() as Waiting;
    const timer = setTimeout(() => {
      // Whatever the worker is stuck on goes with it; the jobs behind it get a fresh one.
      waiting.resolve({ refusal: "too-complex" });
      running = undefined;
      worker = undefined;
      ready = false;
      void terminate(current);
      next();
    }, timeoutMs);
    timer.unref();
    running = { waiting, timer };
    current.postMessage(waiting.job);
  };

  const finish = (result: CompileResult): void => {
    if (running === undefined || running.waiting.job.id !== result.id) return;
    const { waiting, timer } = running;
    clearTimeout(timer);
    running = undefined;
    if ("refusal" in result) waiting.resolve({ refusal: result.refusal });
    else if ("unsupported" in result) waiting.reject(new Error("The schema has no standalone code."));
    else {
      try {
        const { validate } = instantiateValidator(result.source, result.cachedData);
        waiting.resolve({
          validate: ajvValidate(validate),
          schema: JSON.parse(result.schemaText),
          dialect: result.dialect,
        });
      } catch (error) {
        waiting.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    next();
  };

  const start = (): Worker => {
    const lock = terminationLock();
    const started = new Worker(workerEntry(), {
      // Not this process's flags: a preloaded TypeScript module (`--import x.ts`) cannot load before tsx registers.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMiB ?? 1024 },
      workerData: { lock: lock.buffer },
    });
    locks.set(started, lock);
    started.on("message", (message: CompileResult | { ready: true }) => {
      if (!("ready" in message)) finish(message);
      else if (worker === started) {
        ready = true;
        next();
      }
    });
    // An `error` is followed by `exit`: the job it was on is refused, a worker that never started fails them all.
    started.on("error", () => undefined);
    started.on("exit", () => {
      // A worker ended for running out of time was replaced already.
      if (worker !== started) return;
      const wasReady = ready;
      worker = undefined;
      ready = false;
      if (running !== undefined) {
        clearTimeout(running.timer);
        running.waiting.resolve({ refusal: "too-complex" });
        running = undefined;
      }
      if (!wasReady)
        for (const waiting of queue.splice(0)) waiting.reject(new Error("The schema compiler did not start."));
      next();
    });
    worker = started;
    // After the listeners: a `message` listener added later would hold the process again.
    started.unref();
    return started;
  };

  return {
    compile(schema) {
      return new Promise((resolve, reject) => {
        queue.push({ job: { id: nextId++, text: compactJson(schema) }, resolve, reject });
        next();
      });
    },
    async close() {
      const current = worker;
      worker = undefined;
      ready = false;
      const left = [...queue.splice(0), ...(running === undefined ? [] : [running.waiting])];
      if (running !== undefined) clearTimeout(running.timer);
      running = undefined;
      for (const waiting of left) waiting.reject(new Error("The schema compiler was closed."));
      if (current !== undefined) await terminate(current);
    },
  };
}

/**
 * The worker's entry. Built (dist/), it is the compiled worker beside this module. Run from the sources (tests,
 * scripts through tsx), it is the TypeScript worker through `typeScriptWorkerEntry`.
 */
function workerEntry(): URL {
  if (import.meta.url.endsWith(".js")) return new URL("./schema-compiler-worker.js", import.meta.url);
  return typeScriptWorkerEntry(new URL("./schema-compiler-worker.ts", import.meta.url));
}

/**
 * A worker entry that runs the TypeScript module `entry`: Node runs a worker without this process's TypeScript
 * loader, so the entry registers tsx (a dev dependency) before it imports the module. For runs from the sources only.
 */
export function typeScriptWorkerEntry(entry: URL): URL {
  const tsx = import.meta.resolve("tsx/esm/api");
  const source = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
