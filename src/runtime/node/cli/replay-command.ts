import { readFile } from "node:fs/promises";
import { ConfigError, readConfig } from "../../../config.js";
import { loadPolicies, PolicyFileError } from "../../../policy/load-policies.js";
import type { PolicyRegistry } from "../../../policy/policy-registry.js";
import { ajvSchemaCompiling } from "../../../schema/compile-schema.js";
import { useSchemaValidators } from "../../../schema/compile-validator.js";
import { createSchemaValidators } from "../../../schema/schema-validators.js";
import { surfaceNames } from "../../../surfaces/surfaces.js";
import { chooseConfigFolders } from "../config-folders.js";
import { readModelTable, readNamedSchemas, readPolicyFiles } from "../node-gateway.js";
import { policySchemaPath } from "../package-paths.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { replay } from "./replay.js";
import type { ReplayFile } from "./stored-requests.js";
import { UsageError } from "./usage-error.js";

const usage = "Usage: promptgate replay --policy NAME[@HASH] FILE...";

/** The `--help` text of `promptgate replay`. */
export const replayHelp = `${usage}

Replays stored request bodies through the gateway's own checks, offline: each body is
parsed, measured and put through the preflight and the provider check under the policy,
exactly as the gateway would on arrival. No provider is called. Prints one JSON report.

  --policy NAME[@HASH]  the policy: a name, or a name pinned to 12+ hex digits of its sha256
  -h, --help            show this text

Each FILE is a JSON file holding one stored request or an array of them, or a .jsonl
file holding one per line. A stored request is a bare request body, whose surface and
route are inferred from its shape, or an envelope:
  {"surface": ${surfaceNames.map((name) => `"${name}"`).join(" | ")},
   "route": "/chat/completions" (the path below the surface's mount),
   "body": {...},
   "schema": "NAME"              (optional: a named schema, as x-promptgate-schema),
   "cache_prefix_chars": 3000}   (optional: the size of the cached prefix it refers to)

Policies come from PROMPTGATE_POLICIES, named schemas from PROMPTGATE_SCHEMAS; unset,
from ./policies and ./schemas when the working directory has them, else the ones
shipped with promptgate.

Exit code 0 when the report was printed, even if calls would be rejected; 2 for a usage
error (unknown policy, a file that cannot be read or parsed).
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
    // Schemas are admitted as the Node gateway admits them: compiled by Ajv (in place; a replay serves no one else).
    useSchemaValidators(createSchemaValidators({ compiling: ajvSchemaCompiling() }));
    const [policies, models, schemas, files] = await Promise.all([
      readPolicies(config.policiesDir),
      readModelTable(config.policiesDir),
      readSchemas(config.schemasDir),
      Promise.all(options.files.map(readReplayFile)),
    ]);
    const report = await replay({ policy: options.policy, policies, schemas, files, models, config });
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

function parseReplayArgs(args: string[]): { policy: string; files: string[] } | "help" {
  const parsed = parseCommandArgs(args, { policy: { type: "string" }, help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) return "help";
  const policy = parsed.values.policy;
  if (policy === undefined || policy === "") throw new UsageError(`--policy is required.\n${usage}`);
  if (parsed.positionals.length === 0) throw new UsageError(`Name at least one FILE.\n${usage}`);
  return { policy, files: parsed.positionals };
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
