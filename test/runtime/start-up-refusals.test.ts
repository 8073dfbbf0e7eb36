import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { PolicyFileError } from "../../src/policy/load-policies.js";
import { startNodeGateway } from "../../src/runtime/node/node-gateway.js";

const scratch = mkdtempSync(join(tmpdir(), "promptgate-refusals-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let folders = 0;
/** A new empty folder under the test's scratch folder. */
function folder(): string {
  folders += 1;
  const path = join(scratch, `f${folders}`);
  mkdirSync(path);
  return path;
}

/** A copy of the shipped policies with `files` (name → TOML text) added. */
function policiesWith(files: Record<string, string>): string {
  const path = folder();
  cpSync("policies", path, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  return path;
}

/** The message the real start (`startNodeGateway`) refuses `environment` with; fails if it starts. */
async function refusal(environment: Record<string, string>): Promise<string> {
  const outcome = await startNodeGateway(
    { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", ...environment },
    { logDestination: { write: () => undefined } },
  ).then(
    async (gateway) => {
      await gateway.close();
      return undefined;
    },
    (error: unknown) => error,
  );
  expect(outcome, "the gateway started").toBeInstanceOf(Error);
  // A refusal of the gateway's own, never an error of a library it uses.
  expect(outcome instanceof ConfigError || PolicyFileError.isInstance(outcome), String(outcome)).toBe(true);
  const message = (outcome as Error).message;
  // One line, as `promptgate cannot start: …` prints it; no stack.
  expect(message).not.toContain("\n");
  return message;
}

const minimalPolicy = (name: string, window: string) =>
  `name = "${name}"\n[window]\nenforce = true\ntarget_chars = 10\n${window}\nreserve_chars = 0\n`;

describe("the gateway refuses to start, in one line saying what to change, when PROMPTGATE_DB", () => {
  it("is a text file, not a database", async () => {
    const path = join(folder(), "notes.txt");
    writeFileSync(path, "these are notes, not a database\n".repeat(100));
    expect(await refusal({ PROMPTGATE_DB: path })).toBe(
      `PROMPTGATE_DB="${path}" is not a SQLite database (SQLITE_NOTADB): move that file away, or set PROMPTGATE_DB to a file in a writable folder, or to memory.`,
    );
  });

  it("is a folder", async () => {
    const path = folder();
    expect(await refusal({ PROMPTGATE_DB: path })).toBe(
      `PROMPTGATE_DB="${path}" is a folder, not a file: set PROMPTGATE_DB to a file inside it, such as ${join(path, "promptgate.db")}.`,
    );
  });

  it("is in a folder that does not exist, which it does not create", async () => {
    const missing = join(folder(), "typo");
    const path = join(missing, "promptgate.db");
    expect(await refusal({ PROMPTGATE_DB: path })).toBe(
      `PROMPTGATE_DB="${path}" is in a folder that does not exist (${missing}): create it (mkdir -p ${missing}), or set PROMPTGATE_DB to a file in a writable folder, or to memory.`,
    );
    expect(existsSync(missing)).toBe(false);
  });

  it("is in a folder that is a file", async () => {
    const file = join(folder(), "file");
    writeFileSync(file, "");
    expect(await refusal({ PROMPTGATE_DB: join(file, "promptgate.db") })).toBe(
      `PROMPTGATE_DB="${join(file, "promptgate.db")}" is in ${file}, which is a file, not a folder: set PROMPTGATE_DB to a file in a writable folder, or to memory.`,
    );
  });

  it("was written by a newer promptgate", async () => {
    const path = join(folder(), "newer.db");
    const database = new Database(path);
    database.pragma("user_version = 999");
    database.close();
    expect(await refusal({ PROMPTGATE_DB: path })).toMatch(
      new RegExp(
        `^PROMPTGATE_DB="${path}" was written by a newer promptgate \\(schema version 999; this one knows up to \\d+\\): run the promptgate that wrote it, or set PROMPTGATE_DB to a file in a writable folder, or to memory\\.$`,
      ),
    );
  });
});

describe("the gateway refuses to start, in one line, when a configuration folder", () => {
  it("named by PROMPTGATE_POLICIES does not exist", async () => {
    const missing = join(folder(), "no-such-policies");
    expect(await refusal({ PROMPTGATE_POLICIES: missing })).toBe(
      `PROMPTGATE_POLICIES="${missing}" does not exist: set PROMPTGATE_POLICIES to the folder that holds the policy files (*.toml).`,
    );
  });

  it("named by PROMPTGATE_POLICIES relative to the working directory does not exist, saying where it looked", async () => {
    expect(await refusal({ PROMPTGATE_POLICIES: "no-such-policies-folder" })).toBe(
      `PROMPTGATE_POLICIES="no-such-policies-folder" names no folder (${resolve("no-such-policies-folder")} does not exist): set PROMPTGATE_POLICIES to the folder that holds the policy files (*.toml).`,
    );
  });

  it("named by PROMPTGATE_SCHEMAS does not exist", async () => {
    const missing = join(folder(), "no-such-schemas");
    expect(await refusal({ PROMPTGATE_SCHEMAS: missing })).toBe(
      `PROMPTGATE_SCHEMAS="${missing}" does not exist: set PROMPTGATE_SCHEMAS to the folder that holds the named JSON Schemas (*.json).`,
    );
  });

  it("named by PROMPTGATE_POLICIES is a file", async () => {
    const file = join(folder(), "policies.toml");
    writeFileSync(file, minimalPolicy("x", "limit_chars = 20"));
    expect(await refusal({ PROMPTGATE_POLICIES: file })).toBe(
      `PROMPTGATE_POLICIES="${file}" is a file, not a folder: set PROMPTGATE_POLICIES to the folder that holds the policy files (*.toml).`,
    );
  });
});

describe("the gateway refuses to start, in one line, when the default policy", () => {
  it("set in PROMPTGATE_DEFAULT_POLICY is none of the policies, echoing it and listing their names", async () => {
    expect(await refusal({ PROMPTGATE_DEFAULT_POLICY: "investigation.unbounded" })).toBe(
      `PROMPTGATE_DEFAULT_POLICY="investigation.unbounded" names no policy in ./policies (${resolve("policies")}): set it to one of case.interpretation, default, investigation.bounded, investigation.bounded.v1.`,
    );
  });

  it("is unset and the folder holds no policy named default", async () => {
    const policies = folder();
    writeFileSync(join(policies, "only.toml"), minimalPolicy("only", "limit_chars = 20"));
    expect(await refusal({ PROMPTGATE_POLICIES: policies })).toBe(
      `PROMPTGATE_DEFAULT_POLICY is unset, so the default policy is "default", but ${policies} holds no policy of that name: add a policy named "default", or set PROMPTGATE_DEFAULT_POLICY to one of only.`,
    );
  });

  it("cannot be found because the folder holds no policy files", async () => {
    const policies = folder();
    expect(await refusal({ PROMPTGATE_POLICIES: policies })).toBe(
      `PROMPTGATE_DEFAULT_POLICY is unset, so the default policy is "default", but ${policies} holds no policy of that name: the folder holds no policy files (*.toml); add one (promptgate init copies the shipped ones), or set PROMPTGATE_POLICIES to a folder that holds them.`,
    );
  });
});

describe("the gateway refuses to start, in one line, with a policy file", () => {
  it("whose key is misspelt, reporting the key as unknown and the one it likely meant", async () => {
    const policies = policiesWith({ "typo.toml": minimalPolicy("typo", "limit_char = 20") });
    expect(await refusal({ PROMPTGATE_POLICIES: policies })).toBe(
      `${join(policies, "typo.toml")}: [window] has an unknown key limit_char (did you mean limit_chars?)`,
    );
  });

  it("that is not valid TOML, with its line and column and no (root)", async () => {
    const policies = policiesWith({ "broken.toml": 'name = "broken"\n[window\nenforce = true\n' });
    expect(await refusal({ PROMPTGATE_POLICIES: policies })).toMatch(
      new RegExp(`^${join(policies, "broken.toml")}: TOML syntax error at line 2, column \\d+: \\S`),
    );
  });
});

describe("the gateway refuses to start, in one line, when PROMPTGATE_LOG_FORMAT", () => {
  it("is neither json nor pretty", async () => {
    expect(await refusal({ PROMPTGATE_LOG_FORMAT: "yaml" })).toBe(
      'PROMPTGATE_LOG_FORMAT="yaml" must be one of json, pretty (unset: pretty on a terminal, else json).',
    );
  });
});
