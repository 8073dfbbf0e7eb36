// `npm run bench:validators`: the response-schema validators side by side on Node (Ajv compiling at run time, Ajv's
// standalone code precompiled at build time for the named schemas, and the interpretive validator Workers use for
// client schemas), on the investigation schema and a 10 KB answer. bench/workerd-validators.ts times the same inside
// workerd.
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";
import { ajvSchemaCompiling } from "../src/schema/compile-schema.js";
import { investigationAnswerText } from "./fixtures.js";
import { brokenAnswer, type ValidatorTask, type ValidatorVariant, validatorTask } from "./validator-tasks.js";

export interface ValidatorTiming {
  variant: ValidatorVariant;
  task: ValidatorTask;
  /** Mean microseconds per operation. */
  meanMicros: number;
  p99Micros: number;
  samples: number;
}

export const variants: readonly ValidatorVariant[] = ["ajv", "standalone", "interpreted"];
export const tasks: readonly ValidatorTask[] = ["valid", "invalid-diagnostics", "cold-compile"];

/** The answers every runtime validates: the 10 KB investigation answer, and the same answer broken. */
export function benchAnswers(): { valid: unknown; invalid: unknown } {
  const valid = JSON.parse(investigationAnswerText(10_240)) as Record<string, unknown>;
  return { valid, invalid: brokenAnswer(valid) };
}

export async function runValidatorBench(): Promise<ValidatorTiming[]> {
  const answers = benchAnswers();
  const ajv = ajvSchemaCompiling();
  const timings: ValidatorTiming[] = [];
  for (const task of tasks) {
    for (const variant of variants) {
      if (task === "cold-compile" && variant === "standalone") continue;
      const run = validatorTask(variant, task, answers, ajv);
      const bench = new Bench({ time: task === "cold-compile" ? 3_000 : 1_000, warmupIterations: 16 });
      bench.add(`${variant} ${task}`, run);
      await bench.run();
      const result = bench.tasks[0]?.result;
      if (result === undefined || !("latency" in result)) throw new Error(`${variant} ${task} did not run.`);
      timings.push({
        variant,
        task,
        meanMicros: result.latency.mean * 1_000,
        p99Micros: result.latency.p99 * 1_000,
        samples: result.latency.samples?.length ?? 0,
      });
    }
  }
  return timings;
}

/** A Markdown table of timings, one row per task, one column per variant. */
export function validatorTable(timings: readonly ValidatorTiming[], runtime: string): string {
  const cell = (task: ValidatorTask, variant: ValidatorVariant) => {
    const timing = timings.find((entry) => entry.task === task && entry.variant === variant);
    return timing === undefined ? "–" : timing.meanMicros.toFixed(timing.meanMicros < 100 ? 1 : 0);
  };
  return [
    `| ${runtime}, µs per operation | Ajv, compiled at run time | Ajv standalone, precompiled | interpretive |`,
    "|---|---:|---:|---:|",
    ...tasks.map((task) => `| ${task} | ${variants.map((variant) => cell(task, variant)).join(" | ")} |`),
  ].join("\n");
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const timings = await runValidatorBench();
  process.stdout.write(`${validatorTable(timings, `Node ${process.version}`)}\n`);
}
