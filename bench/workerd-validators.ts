// `npm run bench:validators` (after bench/validators.ts): the validator comparison of bench/validators.ts inside workerd (Miniflare, the
// runtime of wrangler dev), for the two variants Workers can run: Ajv's standalone code precompiled at build time, and
// the interpretive validator. workerd's clocks stand still while code runs, so each operation is timed from outside:
// a request that runs it n times, less a request that runs it none, over n.
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import type { ValidatorTask, ValidatorVariant } from "./validator-tasks.js";
import { benchAnswers, tasks, type ValidatorTiming, validatorTable } from "./validators.js";

const variants: readonly ValidatorVariant[] = ["standalone", "interpreted"];

async function workerScript(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL("./workerd-validators-worker.ts", import.meta.url))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error("esbuild wrote no worker.");
  return output.text;
}

export async function runWorkerdValidatorBench(): Promise<ValidatorTiming[]> {
  const miniflare = new Miniflare({ modules: true, script: await workerScript(), compatibilityDate: "2026-04-01" });
  const answers = benchAnswers();
  const timed = async (variant: ValidatorVariant, task: ValidatorTask, n: number): Promise<number> => {
    const started = performance.now();
    const response = await miniflare.dispatchFetch("http://bench.invalid/", {
      method: "POST",
      body: JSON.stringify({ variant, task, n, answers }),
    });
    if (!response.ok) throw new Error(`${variant} ${task}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    return performance.now() - started;
  };
  const timings: ValidatorTiming[] = [];
  try {
    for (const task of tasks) {
      for (const variant of variants) {
        if (task === "cold-compile" && variant === "standalone") continue;
        const n = task === "cold-compile" ? 200 : task === "valid" ? 4_000 : 1_000;
        await timed(variant, task, Math.ceil(n / 4)); // warm-up: the code is compiled and the validator made
        const rounds: number[] = [];
        for (let round = 0; round < 7; round++) {
          const none = await timed(variant, task, 0);
          rounds.push(((await timed(variant, task, n)) - none) / n);
        }
        rounds.sort((a, b) => a - b);
        const median = rounds[Math.floor(rounds.length / 2)] ?? Number.NaN;
        timings.push({
          variant,
          task,
          meanMicros: median * 1_000,
          p99Micros: (rounds.at(-1) ?? median) * 1_000,
          samples: n * rounds.length,
        });
      }
    }
  } finally {
    await miniflare.dispose();
  }
  return timings;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const timings = await runWorkerdValidatorBench();
  process.stdout.write(`${validatorTable(timings, "workerd (Miniflare)")}\n`);
}
