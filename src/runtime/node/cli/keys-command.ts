import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createKey,
  getKey,
  type KeyAdmin,
  KeyAdminError,
  listKeys,
  revokeKey,
  rotateKey,
} from "../../../admin/key-admin.js";
import { ConfigError, readConfig } from "../../../config.js";
import { sha256Hex } from "../../../json/sha256-hex.js";
import { keyFileName } from "../../../keys/key-file.js";
import type { FileKey } from "../../../keys/named-key.js";
import { loadPolicies, PolicyFileError } from "../../../policy/load-policies.js";
import { currentPolicyNames } from "../../../policy/policy-registry.js";
import type { Store } from "../../../store/store.js";
import { surfaceNames } from "../../../surfaces/surfaces.js";
import { chooseConfigFolders } from "../config-folders.js";
import { readKeyFile } from "../key-file.js";
import { readPolicyFiles } from "../node-gateway.js";
import { openStore } from "../open-store.js";
import { policySchemaPath } from "../package-paths.js";
import { startUpRefusal } from "../start-up-refusals.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { UsageError } from "./usage-error.js";

const usage = `Usage: promptgate keys create --name NAME [--team TEAM] [--policy POLICY]... [--model GLOB]... [--expires ISO]
       promptgate keys list
       promptgate keys get ID
       promptgate keys revoke ID
       promptgate keys rotate ID [--grace-seconds N]
       promptgate keys hash < SECRET`;

/** The `--help` text of `promptgate keys`. */
export const keysHelp = `${usage}

Manages the named keys of the store PROMPTGATE_DB names (a SQLite file or a postgres:// URL),
the same keys as the admin API's /promptgate/admin/keys; every running gateway sees a change
within one second. Each command prints one JSON object on stdout.

  create   makes a key and prints it with its secret ("key"), the only time the secret is shown:
             --name NAME        the key's name (required), 1 to 100 characters
             --team TEAM        the team it belongs to
             --policy POLICY    a policy it may use, repeatable; the first is its default
             --model GLOB       a model it may reach ('*' any run of characters, '?' one), repeatable
             --expires ISO      when it stops working, e.g. 2027-01-01T00:00:00Z
  list     prints {"data": [...]}: the store's keys, then those of ${keyFileName}; never a secret
  get      prints one key
  revoke   revokes a key now and prints it
  rotate   gives a key a new secret and prints {"id", "key"}; its earlier secrets keep working
           for --grace-seconds (0 to 2592000, default 0)
  hash     reads a secret from stdin and prints its SHA-256 (hex), for secret_sha256 in ${keyFileName}

Keys of ${keyFileName} (beside the policies, PROMPTGATE_POLICIES) are listed but read-only here:
change them in the file. Policy names are checked against the policy folder.

  -h, --help  show this text

Exit code 0 when done, 1 when the key is unknown or read-only, 2 for a usage error.
`;

/** Reads what a command is given on stdin, whole. */
export type ReadInput = () => Promise<string>;

/** Runs `promptgate keys SUBCOMMAND ...`; `readInput` gives stdin (for `hash`). */
export async function keysCommand(
  args: string[],
  io: CliIo,
  readInput: ReadInput = readStandardInput,
): Promise<ExitCode> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined) throw new UsageError(`Name a subcommand.\n${usage}`);
  if (subcommand === "--help" || subcommand === "-h" || subcommand === "help") return help(io);
  try {
    switch (subcommand) {
      case "create":
        return await create(rest, io);
      case "list":
        return await withoutArguments(rest, io, (admin) => listKeys(admin));
      case "get":
        return await withId(rest, io, (admin, id) => getKey(admin, id));
      case "revoke":
        return await withId(rest, io, (admin, id) => revokeKey(admin, id));
      case "rotate":
        return await rotate(rest, io);
      case "hash":
        return await hash(rest, io, readInput);
      default:
        throw new UsageError(`Unknown subcommand "${subcommand}".\n${usage}`);
    }
  } catch (error) {
    if (KeyAdminError.isInstance(error)) {
      io.stderr(`promptgate keys ${subcommand}: ${error.message}\n`);
      return error.failure === "invalid" ? 2 : 1;
    }
    if (error instanceof ConfigError || PolicyFileError.isInstance(error)) {
      io.stderr(`promptgate keys ${subcommand}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** `keys create`: the options as the admin API's body, so that both check and make keys alike. */
async function create(args: string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseCommandArgs(
    args,
    {
      name: { type: "string" },
      team: { type: "string" },
      policy: { type: "string", multiple: true },
      model: { type: "string", multiple: true },
      expires: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    usage,
  );
  if (parsed.values.help) return help(io);
  if (parsed.positionals.length > 0) throw new UsageError(`keys create takes no arguments but options.\n${usage}`);
  if (parsed.values.name === undefined) throw new UsageError(`--name is required.\n${usage}`);
  const body: Record<string, unknown> = { name: parsed.values.name };
  if (parsed.values.team !== undefined) body.team = parsed.values.team;
  if (parsed.values.policy !== undefined) body.policies = parsed.values.policy;
  if (parsed.values.model !== undefined) body.models = parsed.values.model;
  if (parsed.values.expires !== undefined) body.expires_at = parsed.values.expires;
  return withAdmin(io, (admin) => createKey(admin, body));
}

/** `keys rotate ID [--grace-seconds N]`. */
async function rotate(args: string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseCommandArgs(
    args,
    { "grace-seconds": { type: "string" }, help: { type: "boolean", short: "h" } },
    usage,
  );
  if (parsed.values.help) return help(io);
  const id = oneId(parsed.positionals);
  const grace = parsed.values["grace-seconds"];
  const body = grace === undefined ? undefined : { grace_seconds: /^\d+$/.test(grace) ? Number(grace) : grace };
  return withAdmin(io, (admin) => rotateKey(admin, id, body));
}

/** `keys hash`: the SHA-256 of the secret on stdin (without its line end). */
async function hash(args: string[], io: CliIo, readInput: ReadInput): Promise<ExitCode> {
  const parsed = parseCommandArgs(args, { help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) return help(io);
  if (parsed.positionals.length > 0) {
    throw new UsageError(`keys hash reads the secret from stdin, never from an argument.\n${usage}`);
  }
  const secret = (await readInput()).replace(/\r?\n$/, "");
  if (secret === "") throw new UsageError("keys hash read no secret from stdin.");
  if (/[\r\n]/.test(secret)) throw new UsageError("keys hash takes one secret on one line.");
  io.stdout(`${await sha256Hex(secret)}\n`);
  return 0;
}

async function withoutArguments(args: string[], io: CliIo, operation: (admin: KeyAdmin) => Promise<unknown>) {
  const parsed = parseCommandArgs(args, { help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) return help(io);
  if (parsed.positionals.length > 0) throw new UsageError(`This subcommand takes no arguments.\n${usage}`);
  return withAdmin(io, operation);
}

async function withId(args: string[], io: CliIo, operation: (admin: KeyAdmin, id: string) => Promise<unknown>) {
  const parsed = parseCommandArgs(args, { help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) return help(io);
  const id = oneId(parsed.positionals);
  return withAdmin(io, (admin) => operation(admin, id));
}

function oneId(positionals: string[]): string {
  const [id, ...more] = positionals;
  if (id === undefined || id === "" || more.length > 0) throw new UsageError(`Name one key id.\n${usage}`);
  return id;
}

function help(io: CliIo): ExitCode {
  io.stdout(keysHelp);
  return 0;
}

/**
 * Opens the store `PROMPTGATE_DB` names and reads the policy folder's policy names and `keys.toml`, runs one key
 * operation on them, prints its answer as JSON, and closes the store.
 */
async function withAdmin(io: CliIo, operation: (admin: KeyAdmin) => Promise<unknown>): Promise<ExitCode> {
  const environment = chooseConfigFolders(io.env).environment;
  const config = readConfig(environment);
  const { policyNames, fileKeys } = await readPolicyFolder(config.policiesDir, io.env);
  const store: Store = await openStore(startUpRefusal(environment).database(config.db), {
    poolSize: config.dbPoolSize,
    statementTimeoutMs: config.dbStatementTimeoutMs,
  });
  try {
    const admin: KeyAdmin = {
      store,
      fileKeys: () => fileKeys,
      now: () => Date.now(),
      settingsContext: () => ({
        policyNames,
        providerNames: surfaceNames,
        credentialSet: (variable) => Boolean(io.env[variable]),
      }),
    };
    io.stdout(`${JSON.stringify(await operation(admin), null, 2)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** The current policy names of the policy folder, and the keys of its `keys.toml` (none when it has no such file). */
async function readPolicyFolder(
  policiesDir: string,
  environment: CliIo["env"],
): Promise<{ policyNames: string[]; fileKeys: FileKey[] }> {
  const policySchema: object = JSON.parse(await readFile(policySchemaPath, "utf8"));
  let files: Awaited<ReturnType<typeof readPolicyFiles>>;
  try {
    files = await readPolicyFiles(policiesDir);
  } catch (error) {
    throw new UsageError(`Cannot read the policy folder ${policiesDir}${reasonOf(error)}.`);
  }
  const policies = await loadPolicies(files, policySchema);
  const policyNames = currentPolicyNames(policies);
  try {
    return { policyNames, fileKeys: await readKeyFile(policiesDir, policyNames, environment) };
  } catch (error) {
    if (PolicyFileError.isInstance(error)) throw error;
    throw new UsageError(`Cannot read ${join(policiesDir, keyFileName)}${reasonOf(error)}.`);
  }
}

/** Reads the process's stdin to its end as UTF-8. */
async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

// Node's fs errors carry a short code (ENOENT, EISDIR, EACCES); their message repeats the path.
function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? ` (${code})` : "";
}
