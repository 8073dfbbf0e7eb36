import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { groupCommit, schemaVersion, sqliteStore } from "../../src/runtime/node/sqlite-store.js";
import { callRecord, policyVersion, sha } from "./store-contract.js";

const directory = mkdtempSync(join(tmpdir(), "promptgate-sqlite-"));
let files = 0;

function freshPath(): string {
  files += 1;
  return join(directory, `store-${files}.db`);
}

/** Reads one value with a plain connection of its own, closed again at once. */
function readPragma(path: string, pragma: string): unknown {
  const database = new Database(path);
  try {
    return database.pragma(pragma, { simple: true });
  } finally {
    database.close();
  }
}

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describe("sqliteStore", () => {
  it("creates the folder of the database file when it does not exist", async () => {
    const path = join(directory, "nested", "deeper", "promptgate.db");
    const store = sqliteStore(path);
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  it("reads back everything written after the store is closed and the file reopened", async () => {
    const path = freshPath();
    const version = policyVersion("investigation.bounded", sha("a"));
    const prefix = {
      name: "cachedContents/abc",
      principal: "p1",
      chars: 4_000,
      schemaHashes: [sha("d")],
      expiresAt: 10_000,
    };
    const history = { id: "resp_1", chars: 9_000, outputKnown: false, expiresAt: 10_000 };
    const first = sqliteStore(path);
    await first.savePolicyVersion(version);
    await first.freezeCasePolicy("case-1", "investigation.bounded", sha("a"));
    await first.putCachedPrefix(prefix);
    await first.putResponseHistory(history);
    await first.appendCall(callRecord("ref_1", "case-1"));
    await first.appendCall(callRecord("ref_2", "case-1"));
    await first.close();

    const reopened = sqliteStore(path);
    expect(await reopened.listPolicyVersions()).toEqual([version]);
    expect((await reopened.freezeCasePolicy("case-1", "investigation.bounded", sha("b"))).sha256).toBe(sha("a"));
    expect(await reopened.getCachedPrefix(prefix.name, 0)).toEqual(prefix);
    expect(await reopened.getResponseHistory(history.id, 0)).toEqual(history);
    expect(await reopened.getCall("ref_1")).toEqual(callRecord("ref_1", "case-1"));
    expect((await reopened.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual(["ref_1", "ref_2"]);
    await reopened.close();
  });

  it("puts the database file in WAL mode", async () => {
    const path = freshPath();
    await sqliteStore(path).close();
    expect(readPragma(path, "journal_mode")).toBe("wal");
  });

  it("opens a file another store holds open in WAL, each seeing the other's writes, and leaves it in WAL", async () => {
    const path = freshPath();
    const first = sqliteStore(path);
    const second = sqliteStore(path);
    await first.appendCall(callRecord("ref_first", "case-1"));
    await second.appendCall(callRecord("ref_second", "case-1"));
    expect((await first.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual([
      "ref_first",
      "ref_second",
    ]);
    expect((await second.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual([
      "ref_first",
      "ref_second",
    ]);
    await second.close();
    await first.close();
    expect(readPragma(path, "journal_mode")).toBe("wal");
  });

  it("stores the schema version in user_version", async () => {
    const path = freshPath();
    await sqliteStore(path).close();
    expect(readPragma(path, "user_version")).toBe(schemaVersion);
  });

  it("reopens a database of its own schema version as it is: its data and tables the store does not know are kept", async () => {
    const path = freshPath();
    const first = sqliteStore(path);
    await first.appendCall(callRecord("ref_1", "case-1"));
    await first.close();
    const handMade = new Database(path);
    handMade.exec("CREATE TABLE kept_by_hand (id INTEGER PRIMARY KEY); INSERT INTO kept_by_hand (id) VALUES (7);");
    handMade.close();

    for (let reopening = 0; reopening < 2; reopening++) {
      const store = sqliteStore(path);
      expect((await store.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual(["ref_1"]);
      await store.close();
    }

    expect(readPragma(path, "user_version")).toBe(schemaVersion);
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare("SELECT id FROM kept_by_hand").all()).toEqual([{ id: 7 }]);
    reader.close();
  });

  /** A database as promptgate of schema version 1 left it, with one response history. */
  function versionOneDatabase(path: string): void {
    const database = new Database(path);
    database.exec(readFileSync(new URL("../../migrations/0001_initial.sql", import.meta.url), "utf8"));
    database.pragma("user_version = 1");
    database
      .prepare("INSERT INTO response_histories (id, chars, expires_at) VALUES (?, ?, ?)")
      .run("resp_old", 9_000, 10_000);
    database
      .prepare("INSERT INTO cached_prefixes (name, chars, schema_hashes, expires_at) VALUES (?, ?, ?, ?)")
      .run("cachedContents/old", 4_000, "[]", 10_000);
    database.close();
  }

  it("upgrades a database of schema version 1, keeping its cached prefixes as no one's (an empty principal)", async () => {
    const path = freshPath();
    versionOneDatabase(path);
    const store = sqliteStore(path);
    expect(await store.getCachedPrefix("cachedContents/old", 0)).toEqual({
      name: "cachedContents/old",
      principal: "",
      chars: 4_000,
      schemaHashes: [],
      expiresAt: 10_000,
    });
    await store.close();
  });

  it("upgrades a database of schema version 1, keeping its response histories as counted with their output", async () => {
    const path = freshPath();
    versionOneDatabase(path);
    const store = sqliteStore(path);
    expect(await store.getResponseHistory("resp_old", 0)).toEqual({
      id: "resp_old",
      chars: 9_000,
      outputKnown: true,
      expiresAt: 10_000,
    });
    await store.putResponseHistory({ id: "resp_new", chars: 100, outputKnown: false, expiresAt: 10_000 });
    await store.completeResponseHistory("resp_new", 50);
    expect(await store.getResponseHistory("resp_new", 0)).toMatchObject({ chars: 150, outputKnown: true });
    await store.close();
    expect(readPragma(path, "user_version")).toBe(schemaVersion);
  });

  it("lets a process of schema version 1 sharing an upgraded file keep writing histories, counted as known", async () => {
    const path = freshPath();
    versionOneDatabase(path);
    const store = sqliteStore(path);
    // The statement the previous version of the store writes a response history with.
    const previous = new Database(path);
    previous
      .prepare(
        `INSERT INTO response_histories (id, chars, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET chars = excluded.chars, expires_at = excluded.expires_at`,
      )
      .run("resp_from_previous", 4_000, 10_000);
    previous.close();
    expect(await store.getResponseHistory("resp_from_previous", 0)).toMatchObject({ chars: 4_000, outputKnown: true });
    await store.close();
  });

  it("keeps every one of many writes made at once, in order, each caller told only once another connection sees it", async () => {
    const path = freshPath();
    const store = sqliteStore(path);
    const reader = new Database(path, { readonly: true });
    const stored = reader.prepare("SELECT count(*) AS count FROM calls WHERE ref = ?");
    const refs = Array.from({ length: 200 }, (_, index) => `ref_${index}`);
    const visibleWhenTold = await Promise.all(
      refs.map((ref) =>
        store.appendCall(callRecord(ref, "case-1")).then(() => (stored.get(ref) as { count: number }).count),
      ),
    );
    reader.close();
    expect(visibleWhenTold).toEqual(refs.map(() => 1));
    expect((await store.listCallsOfCase("case-1", 500)).map((record) => record.ref)).toEqual(refs);
    await store.close();
  });

  it("writes what is still queued before it closes", async () => {
    const path = freshPath();
    const store = sqliteStore(path);
    const written = store.appendCall(callRecord("ref_last", "case-1"));
    await store.close();
    await written;
    const reopened = sqliteStore(path);
    expect(await reopened.getCall("ref_last")).toMatchObject({ ref: "ref_last" });
    await reopened.close();
  });

  it("fails a write that fails alone, and commits the rest of its group", async () => {
    const database = new Database(freshPath());
    database.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    const insert = database.prepare("INSERT INTO t (id) VALUES (?)");
    const writes = groupCommit(database, ([, params]) => insert.run(...params));
    const outcomes = await Promise.allSettled([1, 2, 2, 3].map((id) => writes.run(["insert", [id]])));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(database.prepare("SELECT id FROM t ORDER BY id").all()).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    database.close();
  });

  it("refuses a database from a newer schema version, naming the file and both versions", () => {
    const path = freshPath();
    const newer = new Database(path);
    newer.pragma(`user_version = ${schemaVersion + 1}`);
    newer.close();
    let message = "";
    try {
      sqliteStore(path);
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    expect(message).toContain(path);
    expect(message).toContain(`schema version ${schemaVersion + 1}`);
    expect(message).toContain(`version ${schemaVersion} of this promptgate`);
    expect(readPragma(path, "user_version")).toBe(schemaVersion + 1);
    expect(readPragma(path, "journal_mode")).toBe("delete");
  });
});

describe("sqliteStore across processes", () => {
  type Child = ChildProcessByStdio<Writable, Readable, null>;
  const childScript = fileURLToPath(new URL("./freeze-in-child-process.ts", import.meta.url));
  const chargeScript = fileURLToPath(new URL("./charge-in-child-process.ts", import.meta.url));
  const projectRoot = fileURLToPath(new URL("../../", import.meta.url));

  /** Resolves with the child's first stdout line that starts with `prefix`. */
  function lineOf(child: Child, prefix: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let buffered = "";
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const line = buffered.split("\n").find((candidate) => candidate.startsWith(prefix));
        if (line === undefined) return;
        child.stdout.off("data", onData);
        resolve(line);
      };
      child.stdout.on("data", onData);
      child.once("exit", (code) => reject(new Error(`The child exited with ${code} before printing "${prefix}".`)));
    });
  }

  it("freezes exactly one sha256 when eight processes freeze the same case and name at once", async () => {
    const path = freshPath();
    const cases = 300;
    const offered = ["1", "2", "3", "4", "5", "6", "7", "8"].map(sha);
    const children: Child[] = offered.map((sha256) =>
      spawn(process.execPath, ["--import", "tsx", childScript, path, sha256, String(cases)], {
        cwd: projectRoot,
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    await Promise.all(children.map((child) => lineOf(child, "ready")));
    const results = children.map((child) => lineOf(child, "frozen "));
    for (const child of children) child.stdin.end("go\n");
    const frozenByChild = (await Promise.all(results)).map(
      (line) => JSON.parse(line.slice("frozen ".length)) as string[],
    );

    // Every child got back the same sha256 for case-1, one of those offered, and agrees on every other case.
    const caseOne = frozenByChild.map((frozen) => frozen[0]);
    expect(new Set(caseOne).size).toBe(1);
    expect(offered).toContain(caseOne[0]);
    for (const frozen of frozenByChild) expect(frozen).toEqual(frozenByChild[0]);

    const database = new Database(path, { readonly: true });
    const rows = database
      .prepare<[string, string], { sha256: string }>("SELECT sha256 FROM case_policies WHERE case_id = ? AND name = ?")
      .all("case-1", "investigation.bounded");
    const perCase = database
      .prepare<[], { cases: number; rows: number }>(
        "SELECT count(DISTINCT case_id) AS cases, count(*) AS rows FROM case_policies",
      )
      .get();
    database.close();
    expect(rows).toEqual([{ sha256: caseOne[0] }]);
    expect(perCase).toEqual({ cases, rows: cases });
  }, 60_000);

  it("admits exactly up to a cap, both counters of a charge or neither, when four processes charge at once", async () => {
    const path = freshPath();
    const buckets = 40;
    const tries = 15;
    const children: Child[] = [1, 2, 3, 4].map(() =>
      spawn(process.execPath, ["--import", "tsx", chargeScript, path, String(buckets), String(tries)], {
        cwd: projectRoot,
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    await Promise.all(children.map((child) => lineOf(child, "ready")));
    const results = children.map((child) => lineOf(child, "admitted "));
    for (const child of children) child.stdin.end("go\n");
    const admittedByChild = (await Promise.all(results)).map(
      (line) => JSON.parse(line.slice("admitted ".length)) as number[],
    );

    // Each bucket's 60 tries admitted exactly 10, however the processes shared them.
    for (let bucket = 0; bucket < buckets; bucket += 1) {
      expect(admittedByChild.reduce((sum, admitted) => sum + (admitted[bucket] ?? 0), 0)).toBe(10);
    }
    const store = sqliteStore(path);
    const counters = await store.readCounters([
      { scope: "key:shared", name: "requests", from: 1, to: buckets },
      { scope: "key:shared", name: "chars", from: 1, to: buckets },
    ]);
    await store.close();
    expect(counters).toHaveLength(2 * buckets);
    expect(counters.every((counter) => counter.used === 10)).toBe(true);
  }, 60_000);
});

describe("sqliteStore limit counters", () => {
  it("undoes the rows a charge's statement changed before the one past its cap (two connections to one file)", async () => {
    const path = freshPath();
    const first = sqliteStore(path);
    const second = sqliteStore(path);
    try {
      const counter = (name: string) => ({ scope: "key:k", name, bucket: 7, expires: 9_000 });
      expect(await first.chargeCounters([{ ...counter("z"), amount: 5, cap: 5 }])).toBeDefined();
      // "a" and "m" sort before "z": the statement inserts and updates them before it meets "z" past its cap.
      await second.chargeCounters([{ ...counter("m"), amount: 1, cap: 5 }]);
      const refused = await second.chargeCounters([
        { ...counter("a"), amount: 1, cap: 5 },
        { ...counter("m"), amount: 1, cap: 5 },
        { ...counter("z"), amount: 1, cap: 5 },
      ]);
      expect(refused).toBeUndefined();
      const read = (name: string) => ({ scope: "key:k", name, from: 0, to: 10 });
      expect(await first.readCounters([read("a"), read("m"), read("z")])).toEqual([
        { scope: "key:k", name: "m", bucket: 7, used: 1 },
        { scope: "key:k", name: "z", bucket: 7, used: 5 },
      ]);
      // Any other error is no refusal: it is thrown.
      const database = new Database(path);
      database.exec("DROP TABLE limit_counters");
      database.close();
      await expect(first.chargeCounters([{ ...counter("a"), amount: 1, cap: 5 }])).rejects.toThrow(/no such table/);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
