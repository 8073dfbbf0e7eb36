import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayRun, runGateway } from "./gateway-run.js";

const scratch = mkdtempSync(join(tmpdir(), "promptgate-refusals-process-"));
// Passable by `nobody`, for the cases run as that user.
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let folders = 0;
function folder(mode = 0o755): string {
  folders += 1;
  const path = join(scratch, `f${folders}`);
  mkdirSync(path);
  chmodSync(path, mode);
  return path;
}

/** Expects the one line `promptgate cannot start: …` on stderr, nothing on stdout, no stack, exit 1. */
function expectRefusal(outcome: GatewayRun): string {
  expect(outcome.code, outcome.stderr).toBe(1);
  expect(outcome.stdout).toBe("");
  const lines = outcome.stderr.split("\n").filter((line) => line !== "");
  expect(lines, outcome.stderr).toHaveLength(1);
  expect(outcome.stderr).not.toMatch(/^\s+at /m);
  expect(lines[0]).toMatch(/^promptgate cannot start: /);
  return lines[0]!.slice("promptgate cannot start: ".length);
}

describe("a gateway process that cannot start", { timeout: 60_000 }, () => {
  it("prints one line naming PROMPTGATE_DB, its value and the fix for a file that is no database", async () => {
    const path = join(folder(), "notes.txt");
    writeFileSync(path, "not a database\n".repeat(200));
    expect(expectRefusal(await runGateway({ PROMPTGATE_DB: path }))).toBe(
      `PROMPTGATE_DB="${path}" is not a SQLite database (SQLITE_NOTADB): move that file away, or set PROMPTGATE_DB to a file in a writable folder, or to memory.`,
    );
  });

  it("prints one line naming the policies folder it looked for", async () => {
    const missing = join(folder(), "policies");
    expect(expectRefusal(await runGateway({ PROMPTGATE_DB: "memory", PROMPTGATE_POLICIES: missing }))).toBe(
      `PROMPTGATE_POLICIES="${missing}" does not exist: set PROMPTGATE_POLICIES to the folder that holds the policy files (*.toml).`,
    );
  });

  it("prints one line naming a variable with a bad value and what it takes", async () => {
    expect(expectRefusal(await runGateway({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "loud" }))).toBe(
      'PROMPTGATE_LOG="loud" must be one of trace, debug, info, warn, error, fatal, silent (unset: info).',
    );
  });

  it("prints one line naming PROMPTGATE_DB in a folder its user cannot write", async () => {
    const readOnly = folder(0o555);
    const path = join(readOnly, "promptgate.db");
    expect(expectRefusal(await runGateway({ PROMPTGATE_DB: path }, { unprivileged: true }))).toMatch(
      new RegExp(
        `^PROMPTGATE_DB="${path}" is in a folder this user cannot write \\(${readOnly}; SQLite keeps its -wal and -shm files beside the database\\) \\(SQLITE_\\w+\\): make the folder writable, or set PROMPTGATE_DB to a file in a writable folder, or to memory\\.$`,
      ),
    );
  });

  it("prints one line naming PROMPTGATE_DB when the file is read-only", async () => {
    const writable = folder(0o777);
    const path = join(writable, "promptgate.db");
    writeFileSync(path, "");
    chmodSync(path, 0o444);
    expect(expectRefusal(await runGateway({ PROMPTGATE_DB: path }, { unprivileged: true }))).toMatch(
      new RegExp(
        `^PROMPTGATE_DB="${path}" is read-only for this user \\(SQLITE_READONLY\\): make it writable \\(chmod u\\+w ${path}\\), or set PROMPTGATE_DB to a file in a writable folder, or to memory\\.$`,
      ),
    );
  });

  it("prints one line when PROMPTGATE_DB is unset and the working directory is read-only", async () => {
    const cwd = folder(0o555);
    expect(expectRefusal(await runGateway({}, { cwd, unprivileged: true }))).toBe(
      `The database ./data/promptgate.db (PROMPTGATE_DB unset; the working directory is ${cwd}) needs the folder ${join(cwd, "data")}, which cannot be created (EACCES): run promptgate from a folder it may write to, or set PROMPTGATE_DB to a file in a writable folder, or to memory.`,
    );
  });
});

describe("a gateway process with PROMPTGATE_DB unset", { timeout: 60_000 }, () => {
  it("creates ./data for its database in the working directory and starts", async () => {
    const cwd = folder();
    const outcome = await runGateway({}, { cwd });
    expect(outcome.stdout, outcome.stderr).toContain("promptgate listening on");
    expect(existsSync(join(cwd, "data", "promptgate.db"))).toBe(true);
  });
});
