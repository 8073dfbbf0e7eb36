import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

// Vitest's global setup for the PostgreSQL tests: a real server, not a mock. `PROMPTGATE_TEST_POSTGRES` names one
// (a connection string to a database whose user may create databases); unset, a throwaway cluster is made here with
// the machine's `initdb` and `pg_ctl` (Debian's postgresql package), on a free port, as a non-root user, and removed
// at the end. Without a server the PostgreSQL tests are skipped with a notice; under CI that is a failure instead.

declare module "vitest" {
  export interface ProvidedContext {
    /** A connection string for the PostgreSQL tests, or "" when no server could be had. */
    postgresUrl: string;
  }
}

/** The folder of `initdb` and `pg_ctl`: on the PATH, or Debian's versioned one. */
function postgresBin(): string | undefined {
  const onPath = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  if (onPath !== "") return join(onPath, "..");
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  const bin = versions.map((version) => join(root, version, "bin")).find((path) => existsSync(join(path, "initdb")));
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs a PostgreSQL program as the folder's owner: root may not run a cluster, so root runs it as `postgres`. */
function asOwner(program: string, args: string[]): void {
  const root = process.getuid?.() === 0;
  const [command, commandArgs] = root ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  execFileSync(command, commandArgs, { stdio: "pipe" });
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env.PROMPTGATE_TEST_POSTGRES;
  if (given !== undefined && given !== "") {
    project.provide("postgresUrl", given);
    return undefined;
  }
  const bin = postgresBin();
  const root = process.getuid?.() === 0;
  const problem =
    bin === undefined
      ? "no initdb was found (install Debian's postgresql package, or set PROMPTGATE_TEST_POSTGRES)"
      : root && spawnSync("id", ["postgres"]).status !== 0
        ? "running as root, and there is no postgres user to run the cluster as"
        : undefined;
  if (problem !== undefined || bin === undefined) return unavailable(project, problem ?? "");
  const folder = mkdtempSync(join(tmpdir(), "promptgate-postgres-"));
  chmodSync(folder, 0o777);
  const data = join(folder, "data");
  const port = await freePort();
  try {
    asOwner(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "promptgate", "-E", "UTF8", "--no-locale"]);
    const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`;
    asOwner(join(bin, "pg_ctl"), ["-D", data, "-o", options, "-l", join(folder, "log"), "-w", "start"]);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    const output = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return unavailable(project, `the throwaway cluster did not start (${output || String(error)})`);
  }
  project.provide("postgresUrl", `postgres://promptgate@127.0.0.1:${port}/postgres`);
  return () => {
    try {
      asOwner(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  };
}

function unavailable(project: TestProject, problem: string): undefined {
  if (process.env.CI === "true") throw new Error(`The PostgreSQL tests need a server: ${problem}.`);
  console.warn(`\nNOTICE: the PostgreSQL tests are skipped: ${problem}.\n`);
  project.provide("postgresUrl", "");
  return undefined;
}
