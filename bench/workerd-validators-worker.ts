// The worker bench/workerd-validators.ts bundles and runs inside workerd: each request runs one validator task `n`
// times and answers when done; the caller times the request, as workerd's clocks stand still while code runs.
import { type ValidatorTask, type ValidatorVariant, validatorTask } from "./validator-tasks.js";

interface Job {
  variant: ValidatorVariant;
  task: ValidatorTask;
  n: number;
  answers: { valid: unknown; invalid: unknown };
}

const prepared = new Map<string, () => unknown>();

export default {
  async fetch(request: Request): Promise<Response> {
    const job = (await request.json()) as Job;
    const key = `${job.variant} ${job.task}`;
    let run = prepared.get(key);
    if (run === undefined) {
      run = validatorTask(job.variant, job.task, job.answers);
      prepared.set(key, run);
    }
    let last: unknown;
    for (let index = 0; index < job.n; index++) last = run();
    return Response.json({ ran: job.n, sample: JSON.stringify(last)?.slice(0, 80) });
  },
};
