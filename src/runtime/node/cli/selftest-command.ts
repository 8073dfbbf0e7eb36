import { selfTest } from "../../../admin/self-test.js";
import { createApp } from "../../../app.js";
import { ConfigError } from "../../../config.js";
import { stopJobs } from "../../../jobs/answer-jobs.js";
import { PolicyFileError } from "../../../policy/load-policies.js";
import { chooseConfigFolders } from "../config-folders.js";
import { createNodeDeps } from "../node-gateway.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { UsageError } from "./usage-error.js";

const usage = "Usage: promptgate selftest [--timeout SECONDS] [--simulated]";

/** The `--help` text of `promptgate selftest`. */
export const selftestHelp = `${usage}

The release check: runs one synthetic answer job per provider (openai, gemini, anthropic,
openai-compatible) through the gateway as configured by the environment, exactly as a
client would (POST /openai/v1/responses with background: true, then polls), each asking
for a structured answer, and passes when every job ends completed with an answer valid
against its schema. Prints one JSON report: per provider its model (the model table's
first entry for it), its upstream, the job's state, and the problem if it failed. A
provider answered by the simulated one fails the check (problem "simulated") unless
--simulated is given: the check is of the configured providers.

The same check runs at GET /readyz?deep=1 with the admin key.

  --timeout SECONDS  how long each job may take (default 60)
  --simulated        let a provider answered by the simulated one pass
  -h, --help         show this text

Exit code 0 when every provider passed, 1 when one did not, 2 for a usage error.
`;

/** Runs `promptgate selftest`: the release check against the configured upstreams, in this process. */
export async function selftestCommand(args: string[], io: CliIo): Promise<ExitCode> {
  const options = parseSelftestArgs(args);
  if (options === "help") {
    io.stdout(selftestHelp);
    return 0;
  }
  let deps: Awaited<ReturnType<typeof createNodeDeps>>;
  try {
    deps = await createNodeDeps(chooseConfigFolders(io.env).environment, { logDestination: { write: () => {} } });
  } catch (error) {
    if (error instanceof ConfigError || PolicyFileError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
  const app = createApp(deps);
  try {
    const report = await selfTest(deps, async (request) => app.fetch(request), {
      timeoutMs: options.timeoutMs,
      simulatedPasses: options.simulated,
    });
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return report.pass ? 0 : 1;
  } finally {
    // A job still running at its timeout ends as failed before the store closes.
    if (deps.jobs !== undefined) {
      stopJobs(deps.jobs);
      for (let waited = 0; waited < 5_000 && deps.jobs.local.size > 0; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await deps.store.close();
  }
}

function parseSelftestArgs(args: string[]): { timeoutMs: number; simulated: boolean } | "help" {
  const parsed = parseCommandArgs(
    args,
    { timeout: { type: "string" }, simulated: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    usage,
  );
  if (parsed.values.help) return "help";
  if (parsed.positionals.length > 0) throw new UsageError(`selftest takes no arguments.\n${usage}`);
  const seconds = parsed.values.timeout === undefined ? 60 : Number(parsed.values.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new UsageError(`--timeout takes a number of seconds above 0 and at most 3600.\n${usage}`);
  }
  return { timeoutMs: seconds * 1000, simulated: parsed.values.simulated === true };
}
