import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/runtime/node/sqlite-store.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { callRecord, describeStore, policyVersion, sha } from "./store-contract.js";

const directory = mkdtempSync(join(tmpdir(), "promptgate-store-"));
let files = 0;

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describeStore("memoryStore", () => memoryStore());
describeStore("sqliteStore", () => {
  files += 1;
  return sqliteStore(join(directory, `store-${files}.db`));
});

describe("memoryStore bounds", () => {
  it("drops the oldest call records past maxCalls", async () => {
    const store = memoryStore({ maxCalls: 2 });
    for (const ref of ["ref_1", "ref_2", "ref_3"]) await store.appendCall(callRecord(ref, "case-1"));
    expect(await store.getCall("ref_1")).toBeUndefined();
    expect((await store.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual(["ref_2", "ref_3"]);
  });

  it("keeps the order of writing however often records are read", async () => {
    const store = memoryStore({ maxCalls: 2 });
    await store.appendCall(callRecord("ref_1", "case-1"));
    await store.appendCall(callRecord("ref_2", "case-1"));
    await store.getCall("ref_1");
    await store.appendCall(callRecord("ref_1", "case-1"));
    await store.appendCall(callRecord("ref_3", "case-1"));
    expect((await store.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual(["ref_2", "ref_3"]);
  });

  it("drops the oldest cached prefixes and response histories past maxEntries", async () => {
    const store = memoryStore({ maxEntries: 2 });
    for (const name of ["cachedContents/1", "cachedContents/2", "cachedContents/3"]) {
      await store.putCachedPrefix({ name, principal: "p1", chars: 1, schemaHashes: [], expiresAt: 10_000 });
    }
    for (const id of ["resp_1", "resp_2", "resp_3"]) {
      await store.putResponseHistory({ id, chars: 1, outputKnown: true, expiresAt: 10_000 });
    }
    expect(await store.getCachedPrefix("cachedContents/1", 0)).toBeUndefined();
    expect(await store.getCachedPrefix("cachedContents/3", 0)).toBeDefined();
    expect(await store.getResponseHistory("resp_1", 0)).toBeUndefined();
    expect(await store.getResponseHistory("resp_3", 0)).toBeDefined();
  });

  it("counts a cached prefix stored again as the newest", async () => {
    const store = memoryStore({ maxEntries: 2 });
    await store.putCachedPrefix({
      name: "cachedContents/1",
      principal: "p1",
      chars: 1,
      schemaHashes: [],
      expiresAt: 10_000,
    });
    await store.putCachedPrefix({
      name: "cachedContents/2",
      principal: "p1",
      chars: 1,
      schemaHashes: [],
      expiresAt: 10_000,
    });
    await store.putCachedPrefix({
      name: "cachedContents/1",
      principal: "p1",
      chars: 2,
      schemaHashes: [],
      expiresAt: 10_000,
    });
    await store.putCachedPrefix({
      name: "cachedContents/3",
      principal: "p1",
      chars: 1,
      schemaHashes: [],
      expiresAt: 10_000,
    });
    expect(await store.getCachedPrefix("cachedContents/1", 0)).toBeDefined();
    expect(await store.getCachedPrefix("cachedContents/2", 0)).toBeUndefined();
  });

  it("keeps every policy version and case freeze however many there are", async () => {
    const store = memoryStore({ maxCalls: 1, maxEntries: 1 });
    const shas = ["0", "1", "2", "3", "4"].map(sha);
    for (const [index, sha256] of shas.entries()) {
      await store.savePolicyVersion(policyVersion("investigation.bounded", sha256));
      await store.freezeCasePolicy(`case-${index}`, "investigation.bounded", sha256);
    }
    expect((await store.listPolicyVersions()).map((version) => version.sha256)).toEqual(shas);
    expect((await store.freezeCasePolicy("case-0", "investigation.bounded", sha("f"))).sha256).toBe(sha("0"));
  });
});
