import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NewerPostgresSchemaError, postgresSchemaVersion } from "../../src/runtime/node/postgres-store.js";
import { schemaVersion } from "../../src/runtime/node/sqlite-store.js";
import { freshDatabase, postgresUrl, testPostgresStore } from "../support/postgres.js";
import { callRecord, describeStore, storeTables } from "./store-contract.js";

// The PostgreSQL store on a real server: the behaviour suite every store passes, and what only this one does
// (migrating once under a lock, refusing a newer schema, a record whose text PostgreSQL's JSON types refuse).

if (postgresUrl === "") {
  describe.skip("postgresStore (no PostgreSQL server: see the notice above)", () => {
    it("is skipped", () => undefined);
  });
} else {
  let database = "";
  beforeAll(async () => {
    database = await freshDatabase();
  });

  describeStore("postgresStore", async () => {
    const store = await testPostgresStore(database);
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    await client.query(`TRUNCATE ${storeTables.join(", ")} RESTART IDENTITY`);
    await client.end();
    return store;
  });

  describe("postgresStore migrations", () => {
    it("has the schema version of the SQLite dialect, so that the two never drift apart", () => {
      expect(postgresSchemaVersion).toBe(schemaVersion);
      expect(readdirSync("migrations/postgres").length).toBeGreaterThan(0);
    });

    it("migrates once when ten nodes open one new database together", async () => {
      const url = await freshDatabase();
      const stores = await Promise.all(Array.from({ length: 10 }, () => testPostgresStore(url)));
      await Promise.all(stores.map((store) => store.close()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query("SELECT version FROM promptgate_schema");
      await client.end();
      expect(rows).toEqual([{ version: postgresSchemaVersion }]);
    });

    it("upgrades a database of schema version 6, keeping its cached prefixes as no one's (an empty principal)", async () => {
      const url = await freshDatabase();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(readFileSync("migrations/postgres/0006_initial.sql", "utf8"));
      await client.query("CREATE TABLE promptgate_schema (version INTEGER NOT NULL)");
      await client.query("INSERT INTO promptgate_schema (version) VALUES (6)");
      await client.query(
        "INSERT INTO cached_prefixes (name, chars, schema_hashes, expires_at) VALUES ('cachedContents/old', 4000, '[]', 10000)",
      );
      await client.end();
      const store = await testPostgresStore(url);
      expect(await store.getCachedPrefix("cachedContents/old", 0)).toEqual({
        name: "cachedContents/old",
        principal: "",
        chars: 4_000,
        schemaHashes: [],
        expiresAt: 10_000,
      });
      await store.close();
    });

    it("refuses a database a newer promptgate migrated", async () => {
      const url = await freshDatabase();
      await (await testPostgresStore(url)).close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("UPDATE promptgate_schema SET version = version + 1");
      await client.end();
      const opened = testPostgresStore(url);
      await expect(opened).rejects.toBeInstanceOf(NewerPostgresSchemaError);
      await expect(opened).rejects.toThrow(/newer than version/);
    });
  });

  describe("postgresStore records", () => {
    let store: Awaited<ReturnType<typeof testPostgresStore>>;
    beforeAll(async () => {
      store = await testPostgresStore(await freshDatabase());
    });
    afterAll(() => store.close());

    it("keeps a record whose model name holds a lone surrogate, and lists it by its fields", async () => {
      const record = { ...callRecord("ref_lone", "case-lone"), model: "gpt-\ud800" };
      await store.appendCall(record);
      expect((await store.getCall("ref_lone"))?.model).toBe("gpt-\ud800");
      const page = await store.listCalls({ order: "newest", limit: 10, case: "case-lone", decision: record.decision });
      expect(page?.calls.map((call) => call.ref)).toEqual(["ref_lone"]);
    });

    it("appends the records of one turn in one statement", async () => {
      await Promise.all(
        Array.from({ length: 40 }, (_, index) => store.appendCall(callRecord(`ref_turn_${index}`, "case-turn"))),
      );
      const refs = (await store.listCallsOfCase("case-turn", 100)).map((record) => record.ref);
      expect(refs).toEqual(Array.from({ length: 40 }, (_, index) => `ref_turn_${index}`));
    });

    it("appends the records of one turn together, each caller told of its own, one the server refuses alone", async () => {
      const appended = await Promise.allSettled([
        ...Array.from({ length: 30 }, (_, index) => store.appendCall(callRecord(`ref_batch_${index}`, "case-batch"))),
        store.appendCall(callRecord("ref_batch_3", "case-batch")),
        // A record without its time breaks the column's NOT NULL: this record cannot be kept, and only it fails.
        store.appendCall({ ...callRecord("ref_batch_null", "case-batch"), time: null as never }),
      ]);
      expect(appended.filter((outcome) => outcome.status === "rejected")).toHaveLength(1);
      expect(appended.at(-1)?.status).toBe("rejected");
      expect(await store.listCallsOfCase("case-batch", 100)).toHaveLength(30);
    });

    it("keeps a record whose case holds U+0000, and lists it by that case", async () => {
      await Promise.all([
        store.appendCall(callRecord("ref_nul_1", "case-\u0000")),
        store.appendCall(callRecord("ref_nul_2", "case-\u0000")),
      ]);
      await store.appendCall(callRecord("ref_nul_3", "case-\u0000"));
      const refs = (await store.listCallsOfCase("case-\u0000", 10)).map((record) => record.ref);
      expect(refs).toEqual(["ref_nul_1", "ref_nul_2", "ref_nul_3"]);
      expect((await store.getCall("ref_nul_3"))?.case).toBe("case-\u0000");
    });

    it("answers whether the server is reachable", async () => {
      expect(await store.reachable()).toBe(true);
    });
  });

  describe("postgresStore limit counters", () => {
    it("admits exactly up to a cap when four nodes charge one counter at once", async () => {
      const url = await freshDatabase();
      const nodes = await Promise.all([1, 2, 3, 4].map(() => testPostgresStore(url)));
      try {
        const counter = { scope: "key:shared", name: "requests_per_minute", bucket: 29_500_000, expires: 9_000 };
        const tokens = { ...counter, name: "tokens_per_day" };
        // Ten charges at a time on each node, one a connection of its pool: they queue on the counter's row lock on
        // the server, not for a connection in a pool. 160 tries in all; half name the two counters the other way
        // round (no deadlock: a charge locks its counters in one order).
        const pair = [
          { ...counter, amount: 1, cap: 100 },
          { ...tokens, amount: 1_000_000_000, cap: 1_000_000_000_000 },
        ];
        const charged = (
          await Promise.all(
            nodes.flatMap((node, nodeIndex) =>
              Array.from({ length: 10 }, async (_, lane) => {
                const outcomes = [];
                for (let attempt = 0; attempt < 4; attempt += 1) {
                  const reversed = (nodeIndex + lane + attempt) % 2 === 1;
                  outcomes.push(await node.chargeCounters(reversed ? [...pair].reverse() : pair));
                }
                return outcomes;
              }),
            ),
          )
        ).flat();
        expect(charged).toHaveLength(160);
        expect(charged.filter((values) => values !== undefined)).toHaveLength(100);
        // What each admitted charge was told is the counter's value after it: 1 … 100, each once.
        const seen = charged.flatMap((values) => values?.filter((value) => value.name === counter.name) ?? []);
        expect(seen.map((value) => value.used).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 100 }, (_, index) => index + 1),
        );
        expect(
          await nodes[0]?.readCounters([
            { scope: counter.scope, name: counter.name, from: counter.bucket, to: counter.bucket },
            { scope: tokens.scope, name: tokens.name, from: tokens.bucket, to: tokens.bucket },
          ]),
        ).toEqual([
          { scope: counter.scope, name: counter.name, bucket: counter.bucket, used: 100 },
          { scope: tokens.scope, name: tokens.name, bucket: tokens.bucket, used: 100_000_000_000 },
        ]);
      } finally {
        await Promise.all(nodes.map((node) => node.close()));
      }
    });

    it("refuses a charge past a cap as the server's CHECK, undoing the rows the statement changed before it", async () => {
      const url = await freshDatabase();
      const store = await testPostgresStore(url);
      try {
        const counter = (name: string) => ({ scope: "key:k", name, bucket: 7, expires: 9_000 });
        await store.chargeCounters([{ ...counter("m"), amount: 1, cap: 5 }]);
        await store.chargeCounters([{ ...counter("z"), amount: 5, cap: 5 }]);
        expect(
          await store.chargeCounters([
            { ...counter("a"), amount: 1, cap: 5 },
            { ...counter("m"), amount: 1, cap: 5 },
            { ...counter("z"), amount: 1, cap: 5 },
          ]),
        ).toBeUndefined();
        const read = (name: string) => ({ scope: "key:k", name, from: 0, to: 10 });
        expect(await store.readCounters([read("a"), read("m"), read("z")])).toEqual([
          { scope: "key:k", name: "m", bucket: 7, used: 1 },
          { scope: "key:k", name: "z", bucket: 7, used: 5 },
        ]);
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        const columns = await client.query(
          "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'limit_counters' ORDER BY column_name",
        );
        await client.query("DROP TABLE limit_counters");
        await client.end();
        expect(columns.rows.filter((row) => row.data_type === "bigint").map((row) => row.column_name)).toEqual([
          "bucket",
          "cap",
          "expires_at",
          "used",
        ]);
        // Any other error is no refusal: it is thrown.
        await expect(store.chargeCounters([{ ...counter("a"), amount: 1, cap: 5 }])).rejects.toThrow(/limit_counters/);
      } finally {
        await store.close();
      }
    });
  });

  describe("postgresStore connections", () => {
    async function admin<T>(sql: string, values: unknown[] = []): Promise<T[]> {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      try {
        return (await client.query(sql, values)).rows as T[];
      } finally {
        await client.end();
      }
    }

    it("serves again after the server dropped every connection, and says while its database is gone", async () => {
      const url = await freshDatabase();
      const store = await testPostgresStore(url);
      try {
        await store.appendCall(callRecord("ref_before", "case-c"));
        const name = new URL(url).pathname.slice(1);
        await admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
        // A call that meets a dropped connection may fail (it is `internal` for that call); the next ones are served.
        await store.getCall("ref_before").catch(() => undefined);
        expect((await store.getCall("ref_before"))?.ref).toBe("ref_before");
        await store.appendCall(callRecord("ref_after", "case-c"));
        expect((await store.listCallsOfCase("case-c", 10)).map((call) => call.ref)).toEqual([
          "ref_before",
          "ref_after",
        ]);
        await admin(`DROP DATABASE ${name} WITH (FORCE)`);
        expect(await store.reachable()).toBe(false);
      } finally {
        await store.close();
      }
    });
  });
}
