import { readFile } from "node:fs/promises";
import { ConfigError, readConfig } from "../../../config.js";
import { loadPolicies, PolicyFileError } from "../../../policy/load-policies.js";
import type { PolicyRegistry } from "../../../policy/policy-registry.js";
import { surfaceNames } from "../../../surfaces/surfaces.js";
import { chooseConfigFolders } from "../config-folders.js";
import { readModelTable, readNamedSchemas, readPolicyFiles } from "../node-gateway.js";
import { policySchemaPath } from "../package-paths.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { replay, replayComparing } from "./replay.js";
import type { ReplayFile } from "./stored-requests.js";
import { UsageError } from "./usage-error.js";

const usage = `Usage: promptgate replay --policy NAME[@HASH] FILE...
       promptgate replay --policy NAME[@HASH] [--policy NAME[@HASH]]... [--report] FILE...`;

/** The `--help` text of `promptgate replay`. */
export const replayHelp = `${usage}

Replays stored request bodies through the gateway's own checks, offline: each body is
parsed, measured and put through the preflight and the provider check under the policy,
exactly as the gateway would on arrival. No provider is called. Prints one JSON report.

  --policy NAME[@HASH]  the policy: a name, or a name pinned to 12+ hex digits of its sha256;
                        repeat it to replay the same requests under several policies
  --report              add "aggregate": the sizes per policy and surface (below)
  -h, --help            show this text

Each FILE is a JSON file holding one stored request or an array of them, or a .jsonl
file holding one per line. A stored request is a bare request body, whose surface and
route are inferred from its shape, or an envelope:
  {"surface": ${surfaceNames.map((name) => `"${name}"`).join(" | ")},
   "route": "/chat/completions" (the path below the surface's mount),
   "body": {...},
   "schema": "NAME"              (optional: a named schema, as x-promptgate-schema),
   "cache_prefix_chars": 3000}   (optional: the size of the cached prefix it refers to)

The report is {"policy", "files", "requests", "summary"}: one entry per stored request,
with its "prompt_size" (the preflight's), "provider_prompt_size", "passes", and the
"error" of a call the gateway would refuse. With several --policy, a request's result
under each policy sits in its "results", in the order the policies were given:
  {"policies": ["NAME@HASH", ...], "files": [...],
   "requests": [{"file", "index", "surface", "route", "inferred",
                 "results": [{"policy", "prompt_size", "provider_prompt_size", "passes", ...}, ...]}],
   "summaries": [{"policy", "count", "passing", "rejected", "invalid", ...}, ...]}

--report adds "aggregate", one entry per policy and surface:
  {"policy", "surface", "count", "unmeasured", "target_chars", "limit_chars",
   "preflight": {...}, "provider": {...}}
"unmeasured" counts the requests refused before the preflight measured them (an invalid
body, an unknown route or schema); they are in no figure. "preflight" and "provider" each
hold, over the requests that check measured:
  "figure"        "conservative_total_chars", the figure the check compares with the limit:
                  total_chars plus the policy's reserve in the preflight, total_chars alone
                  in the provider check (which has no reserve)
  "measured"      how many requests the check measured (the provider check does not run
                  on count routes, nor on a call refused before it)
  "min", "median", "max"
                  of the figure, null when none was measured; the median of an even count
                  is the lower of the two middle values
  "under_target"  how many have total_chars <= target_chars: not "over_target", as the
                  gateway compares the target, without the reserve
  "under_limit"   how many have conservative_total_chars <= limit_chars: inside the window,
                  so not refused by the check for their size (a policy that enforces its
                  window also refuses a call with more media parts than it allows)

Policies come from PROMPTGATE_POLICIES, named schemas from PROMPTGATE_SCHEMAS; unset,
from ./policies and ./schemas when the working directory has them, else the ones
shipped with promptgate.

Exit code 0 when the report was printed, even if calls would be rejected; 2 for a usage
error (unknown policy, the same policy twice, a file that cannot be read or parsed).
`;

/** Runs `promptgate replay ARGS`: reads policies, schemas and files, prints the report. */
export async function replayCommand(args: string[], io: CliIo): Promise<ExitCode> {
  try {
    const options = parseReplayArgs(args);
    if (options === "help") {
      io.stdout(replayHelp);
      return 0;
    }
    const config = readConfig(chooseConfigFolders(io.env).environment);
    const [policies, models, schemas, files] = await Promise.all([
      readPolicies(config.policiesDir),
      readModelTable(config.policiesDir),
      readSchemas(config.schemasDir),
      Promise.all(options.files.map(readReplayFile)),
    ]);
    const shared = { policies, schemas, files, models, config, aggregate: options.report };
    const report =
      options.policies.length === 1
        ? await replay({ ...shared, policy: options.policies[0]! })
        : await replayComparing({ ...shared, policy: options.policies });
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (UsageError.isInstance(error) || error instanceof ConfigError || PolicyFileError.isInstance(error)) {
      io.stderr(`promptgate replay: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** What `promptgate replay` was asked for: one policy or several (`--policy` repeated), and whether `--report`. */
interface ReplayArgs {
  policies: string[];
  report: boolean;
  files: string[];
}

function parseReplayArgs(args: string[]): ReplayArgs | "help" {
  const parsed = parseCommandArgs(
    args,
    {
      policy: { type: "string", multiple: true },
      report: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    usage,
  );
  if (parsed.values.help) return "help";
  const policies = parsed.values.policy ?? [];
  if (policies.length === 0 || policies.includes("")) throw new UsageError(`--policy is required.\n${usage}`);
  if (parsed.positionals.length === 0) throw new UsageError(`Name at least one FILE.\n${usage}`);
  return { policies, report: parsed.values.report ?? false, files: parsed.positionals };
}

/** Reads a stored-request file; an unreadable one is a usage error naming it. */
async function readReplayFile(path: string): Promise<ReplayFile> {
  try {
    return { path, text: await readFile(path, "utf8") };
  } catch (error) {
    throw new UsageError(`Cannot read ${path}${reasonOf(error)}.`);
  }
}

async function readPolicies(policiesDir: string): Promise<PolicyRegistry> {
  const policySchema: object = JSON.parse(await readFile(policySchemaPath, "utf8"));
  let files: Awaited<ReturnType<typeof readPolicyFiles>>;
  try {
    files = await readPolicyFiles(policiesDir);
  } catch (error) {
    throw new UsageError(`Cannot read the policy folder ${policiesDir}${reasonOf(error)}.`);
  }
  return loadPolicies(files, policySchema);
}

async function readSchemas(schemasDir: string): Promise<ReadonlyMap<string, unknown>> {
  try {
    return await readNamedSchemas(schemasDir);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new UsageError(`Cannot read the schema folder ${schemasDir}${reasonOf(error)}.`);
  }
}

// Node's fs errors carry a short code (ENOENT, EISDIR, EACCES); their message repeats the path.
function reasonOf(error: unknown): string {
  if (error instanceof SyntaxError) return ": not valid JSON";
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? ` (${code})` : "";
}
