import { access, copyFile, mkdir, readdir } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { packageFolders } from "../package-paths.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { UsageError } from "./usage-error.js";

const usage = "Usage: promptgate init [DIR] [--force]";

/** The `--help` text of `promptgate init`. */
export const initHelp = `${usage}

Copies the policies and the named schemas shipped with promptgate into DIR/policies and
DIR/schemas (DIR: the working directory by default), for editing. Started from DIR, the
gateway reads them instead of the shipped ones. The policy meta-schema (policy.schema.json)
is not copied: the gateway always validates policies against its own.

  --force     overwrite files that exist (without it, nothing is written if any does)
  -h, --help  show this text
`;

/** Runs `promptgate init [DIR] [--force]`: copies the shipped folders out, never over a file unless forced. */
export async function initCommand(args: string[], io: CliIo): Promise<ExitCode> {
  const options = parseInitArgs(args);
  if (options === "help") {
    io.stdout(initHelp);
    return 0;
  }
  const target = resolve(options.directory);
  const copies = [...(await shippedFiles("policies", target)), ...(await shippedFiles("schemas", target))];
  const existing = await existingOf(copies.map((copy) => copy.to));
  if (existing.length > 0 && !options.force) {
    io.stderr(
      `promptgate init: nothing was written, as ${existing.length === 1 ? "this file exists" : "these files exist"} in ${target}: ${existing.map((path) => relative(target, path)).join(", ")}. Run promptgate init --force to overwrite.\n`,
    );
    return 1;
  }
  for (const { from, to } of copies) {
    await mkdir(dirname(to), { recursive: true });
    await copyFile(from, to);
  }
  const written = copies.map(({ to }) => `  ${relative(target, to)}${existing.includes(to) ? " (overwritten)" : ""}`);
  io.stdout(
    `promptgate init: wrote ${copies.length} files to ${target}:\n${written.join("\n")}\n` +
      `Start the gateway in ${target} to serve them, or set PROMPTGATE_POLICIES and PROMPTGATE_SCHEMAS to these folders.\n`,
  );
  return 0;
}

function parseInitArgs(args: string[]): { directory: string; force: boolean } | "help" {
  const parsed = parseCommandArgs(args, { force: { type: "boolean" }, help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) return "help";
  if (parsed.positionals.length > 1) throw new UsageError(`Name at most one DIR.\n${usage}`);
  return { directory: parsed.positionals[0] ?? ".", force: parsed.values.force === true };
}

/** The files of one shipped folder and where they go in `target`; the policy meta-schema stays in the package. */
async function shippedFiles(folder: "policies" | "schemas", target: string): Promise<{ from: string; to: string }[]> {
  const entries = await readdir(packageFolders[folder], { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name !== "policy.schema.json")
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ from: join(packageFolders[folder], name), to: join(target, folder, name) }));
}

async function existingOf(paths: string[]): Promise<string[]> {
  const found = await Promise.all(
    paths.map((path) =>
      access(path).then(
        () => path,
        () => undefined,
      ),
    ),
  );
  return found.filter((path) => path !== undefined);
}
