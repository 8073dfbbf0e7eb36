import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/**
 * The tiers of the Node suite, each a Vitest project (vitest.config.ts):
 * - `unit`: in-process, no socket, no child process; `npm run test:quick` runs it alone, in under two minutes.
 * - `e2e`: real sockets, processes and SDK clients against a started gateway.
 * - `property`: oracles, fuzzing and differential suites, whose worth is their number of runs.
 * - `system`: what needs a system beside Node: PostgreSQL, Chromium, a cluster of processes, the packed package.
 * (The workerd suite and the wrangler smoke test are `system` too, with configurations of their own.)
 * A unit test that needs more than a few seconds belongs to another tier; the unit project's timeout (10 s) enforces it.
 */
export type Tier = "unit" | "e2e" | "property" | "system";

/** Files of the system tier by name: what they need is not seen in their imports. */
const systemFiles = [/^test\/browser\//, /^test\/runtime\/cluster-/, /^test\/cli\/package\.test\.ts$/];

/** Files of the property tier: oracles, fuzzing, differential and soundness suites. */
const propertyFiles = [
  /^test\/oracle\//,
  /fuzz/,
  /propert/,
  /soundness/,
  /^test\/json\/(json-tape(-checked-utf8)?|kept-segments)\.test\.ts$/,
];

/** Folders whose every test drives a started gateway, a process or a client SDK over a socket. */
const endToEndFolders = [/^test\/e2e\//, /^test\/clients\//, /^test\/readme\//];

/** What a test file, or a module of test/ it imports, reaches for when it needs PostgreSQL. */
const needsPostgres = /from\s+["'][^"']*support\/postgres\.js["']|from\s+["']\.\/postgres\.js["']/;

/** What a test file, or a module of test/ it imports, reaches for when it opens a socket or starts a process. */
const opensSockets = /from\s+["']node:(net|http|https|child_process)["']|\bstart(NodeGateway|FakeUpstream)\(/;

/** The text of a test file and of every module under test/ it imports by a relative path, transitively. */
function testGraphText(file: string, seen = new Set<string>()): string {
  if (seen.has(file) || !file.startsWith("test/") || !existsSync(file)) return "";
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const imported = [...text.matchAll(/\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g)].map(([, specifier]) => {
    const path = relative(".", join(dirname(file), specifier!));
    return path.replace(/\.js$/, ".ts");
  });
  return [text, ...imported.map((path) => testGraphText(path, seen))].join("\n");
}

/** The tier of a test file, by its path from the repository's root. */
export function tierOf(file: string): Tier {
  if (systemFiles.some((pattern) => pattern.test(file))) return "system";
  const graph = testGraphText(file);
  if (needsPostgres.test(graph)) return "system";
  if (propertyFiles.some((pattern) => pattern.test(file))) return "property";
  if (endToEndFolders.some((pattern) => pattern.test(file)) || opensSockets.test(graph)) return "e2e";
  return "unit";
}

/** The Node suite's test files (not workerd's own, not the smoke test), by tier. */
export function testFilesByTier(): Record<Tier, string[]> {
  const tiers: Record<Tier, string[]> = { unit: [], e2e: [], property: [], system: [] };
  const files = readdirSync("test", { recursive: true, encoding: "utf8" })
    .map((file) => join("test", file))
    .filter((file) => file.endsWith(".test.ts") && !/^test\/(workers|smoke)\//.test(file))
    .sort();
  for (const file of files) tiers[tierOf(file)].push(file);
  return tiers;
}
