import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A copy of the shipped `policies/` in a new temporary folder, with `files` (name → TOML text) added or replaced. */
export function copyPolicies(files: Record<string, string> = {}): string {
  const directory = mkdtempSync(join(tmpdir(), "promptgate-policies-"));
  cpSync("policies", directory, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
  return directory;
}

/** Rewrites one policy file of a folder in place. */
export function editPolicy(directory: string, fileName: string, edit: (text: string) => string): void {
  const path = join(directory, fileName);
  const before = readFileSync(path, "utf8");
  const after = edit(before);
  if (after === before) throw new Error(`The edit changed nothing in ${fileName}.`);
  writeFileSync(path, after);
}

/** The shipped `investigation.bounded` policy with its window's `limit_chars` set to `limit`. */
export function withLimit(limit: number): (text: string) => string {
  return (text) => text.replace(/^limit_chars = \d+$/m, `limit_chars = ${limit}`);
}

/** The shipped `investigation.bounded` policy renamed, and estimating unknown prefixes at `charsPerToken`. */
export function estimatingPolicy(name: string, charsPerToken: number): string {
  return readFileSync(join("policies", "investigation.bounded.toml"), "utf8")
    .replace(/^name = ".*"$/m, `name = "${name}"`)
    .replace(/^unknown_prefix = "reject"$/m, `unknown_prefix = "estimate"\nchars_per_token = ${charsPerToken}`);
}

/** A path for a SQLite file in a new temporary folder; the file does not exist yet. */
export function tempDatabase(): string {
  return join(mkdtempSync(join(tmpdir(), "promptgate-db-")), "promptgate.db");
}
