import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/runtime/node/sqlite-store.js";
import { callListingStatement } from "../../src/store/call-listing-sql.js";
import { usageStatement } from "../../src/store/call-usage.js";
import { sqliteDialect } from "../../src/store/sql-store.js";
import type { CallQuery } from "../../src/store/store.js";
import { callRecord } from "./store-contract.js";

const directory = mkdtempSync(join(tmpdir(), "promptgate-listing-"));
let files = 0;

function freshPath(): string {
  files += 1;
  return join(directory, `store-${files}.db`);
}

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const migrationsFolder = new URL("../../migrations/", import.meta.url);

/** A database as promptgate of schema `version` left it: the first `version` migrations applied. */
function databaseOfVersion(path: string, version: number): Database.Database {
  const database = new Database(path);
  const names = readdirSync(migrationsFolder)
    .filter((name) => name.endsWith(".sql"))
    .sort();
  for (const name of names.slice(0, version)) database.exec(readFileSync(new URL(name, migrationsFolder), "utf8"));
  database.pragma(`user_version = ${version}`);
  return database;
}

/** The statement with which promptgate of schema versions 1 and 2 appends a call. */
function appendAsVersionTwo(database: Database.Database, ref: string, overrides: Parameters<typeof callRecord>[2]) {
  const record = callRecord(ref, undefined, overrides);
  database
    .prepare("INSERT INTO calls (ref, case_id, time, record) VALUES (?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING")
    .run(record.ref, record.case ?? null, record.time, JSON.stringify(record));
}

describe("sqliteStore call listings", () => {
  it("lists and filters the calls of a database written before listings existed", async () => {
    const path = freshPath();
    const old = databaseOfVersion(path, 2);
    appendAsVersionTwo(old, "ref_old_1", {});
    appendAsVersionTwo(old, "ref_old_2", { decision: "rejected", error: "INVESTIGATION_PROMPT_LIMIT" });
    old.close();
    const store = sqliteStore(path);
    const rejected = await store.listCalls({ order: "newest", limit: 10, error: "INVESTIGATION_PROMPT_LIMIT" });
    expect(rejected?.calls.map((record) => record.ref)).toEqual(["ref_old_2"]);
    const byPolicy = await store.listCalls({ order: "newest", limit: 10, policy: "investigation.bounded" });
    expect(byPolicy?.calls.map((record) => record.ref)).toEqual(["ref_old_2", "ref_old_1"]);
    await store.close();
  });

  it("filters and sums the keyed calls of a database written before calls had key columns", async () => {
    const path = freshPath();
    const old = databaseOfVersion(path, 8);
    const key = { id: "key_000000000000000000000001", name: "ci", team: "team-a" };
    appendAsVersionTwo(old, "ref_keyed", { key, usage: { input_tokens: 12, output_tokens: 3 } });
    appendAsVersionTwo(old, "ref_unkeyed", {});
    old.close();
    const store = sqliteStore(path);
    const page = await store.listCalls({ order: "newest", limit: 10, team: "team-a" });
    expect(page?.calls.map((record) => record.ref)).toEqual(["ref_keyed"]);
    const usage = await store.usage({ from: "2026-03-01T00:00:00.000Z", to: "2026-03-02T00:00:00.000Z" });
    expect(usage).toEqual([
      { day: "2026-03-01", key_id: key.id, calls: 1, rejected: 0, chars: 0, tokens_in: 12, tokens_out: 3 },
    ]);
    await store.close();
  });

  it("lists the calls that a process of the previous schema version appends to an upgraded file", async () => {
    const path = freshPath();
    databaseOfVersion(path, 2).close();
    const store = sqliteStore(path);
    const previous = new Database(path);
    appendAsVersionTwo(previous, "ref_from_previous", { decision: "failed", surface: "gemini" });
    previous.close();
    const page = await store.listCalls({ order: "newest", limit: 10, decision: "failed", surface: "gemini" });
    expect(page?.calls.map((record) => record.ref)).toEqual(["ref_from_previous"]);
    await store.close();
  });

  describe("query plans", () => {
    const path = freshPath();

    beforeAll(async () => {
      await sqliteStore(path).close();
    });

    /** SQLite's plan for the page of `query`, one line per step. */
    function planOf(query: Omit<CallQuery, "limit">, afterSeq?: number): string[] {
      const [sql, params] = callListingStatement({ limit: 100, ...query }, afterSeq, sqliteDialect.unindexed);
      const database = new Database(path, { readonly: true });
      try {
        const rows = database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>;
        return rows.map((row) => row.detail);
      } finally {
        database.close();
      }
    }

    it("reads the latest calls backwards along the table, without sorting", () => {
      expect(planOf({ order: "newest" }, 500)).toEqual(["SEARCH calls USING INTEGER PRIMARY KEY (rowid<?)"]);
    });

    const single: Array<[string, Omit<CallQuery, "limit" | "order">, string]> = [
      ["case", { case: "case-1" }, "calls_by_case (case_id=? AND seq>?)"],
      ["decision", { decision: "rejected" }, "calls_by_decision (decision=? AND seq>?)"],
      ["surface", { surface: "gemini" }, "calls_by_surface (surface=? AND seq>?)"],
      ["error", { error: "timeout" }, "calls_by_error (error=? AND seq>?)"],
      ["policy name", { policy: "default" }, "calls_by_policy_name (policy_name=? AND seq>?)"],
      ["policy version", { policy: "default@aaaaaaaaaaaa" }, "calls_by_policy (policy=? AND seq>?)"],
      ["key", { key: "key_000000000000000000000001" }, "calls_by_key (key_id=? AND seq>?)"],
      ["team", { team: "team-a" }, "calls_by_team (team=? AND seq>?)"],
    ];
    it.each(single)("reads a page filtered by %s from its index, in order", (_, filter, index) => {
      expect(planOf({ order: "oldest", ...filter }, 500)).toEqual([`SEARCH calls USING INDEX ${index}`]);
      expect(planOf({ order: "newest", ...filter }).join("\n")).not.toContain("TEMP B-TREE");
    });

    it("leads with the case's index when filters combine, then the error's", () => {
      const all = {
        case: "case-1",
        decision: "rejected",
        surface: "gemini",
        error: "timeout",
        policy: "default",
      } as const;
      expect(planOf({ order: "newest", ...all })).toEqual(["SEARCH calls USING INDEX calls_by_case (case_id=?)"]);
      expect(planOf({ order: "newest", decision: "rejected", surface: "gemini", error: "timeout" })).toEqual([
        "SEARCH calls USING INDEX calls_by_error (error=?)",
      ]);
    });

    it("sums usage from the range of its key's, its team's or every key's index, never the whole table", () => {
      const range = { from: "2026-03-01T00:00:00.000Z", to: "2026-03-31T00:00:00.000Z" };
      const database = new Database(path, { readonly: true });
      try {
        const scanOf = (query: Parameters<typeof usageStatement>[0]) => {
          const [sql, params] = usageStatement(query);
          const rows = database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>;
          return rows[0]?.detail;
        };
        expect(scanOf(range)).toBe("SEARCH calls USING INDEX calls_usage_by_time (time>? AND time<?)");
        expect(scanOf({ ...range, key: "key_000000000000000000000001" })).toBe(
          "SEARCH calls USING INDEX calls_usage_by_key (key_id=? AND time>? AND time<?)",
        );
        expect(scanOf({ ...range, team: "team-a" })).toBe(
          "SEARCH calls USING INDEX calls_usage_by_team (team=? AND time>? AND time<?)",
        );
      } finally {
        database.close();
      }
    });
  });
});
