import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KeySettings, NamedKey } from "../../src/keys/named-key.js";
import type { Policy, PolicyVersion } from "../../src/policy/policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import type { JobRecord, SessionRecord, Store } from "../../src/store/store.js";

// The one behaviour suite every Store implementation passes. It imports no `node:` module, so that it can run
// unchanged on Workers against a bindings store; the factories live in the runtime-specific test files.

/** A shipped-like policy, with a nested repair rule so that a round trip is checked in depth. */
function policy(name: string, limitChars = 20_000): Policy {
  return {
    name,
    description: "Bounded investigation answers.",
    window: { enforce: true, target_chars: 10_000, limit_chars: limitChars, reserve_chars: 1_500 },
    gemini: { projection: "nested", schema_field: "responseJsonSchema" },
    validation: { enabled: true, on_invalid: "error" },
    repair: [
      {
        name: "choices-envelope",
        at: "/result",
        when: { pointer: "/kind", equals: "investigation" },
        envelope: "choices",
        require_key: "findings",
      },
    ],
    cache: { unknown_prefix: "reject", chars_per_token: 4 },
    upstream_errors: { text: "redacted" },
  };
}

export function policyVersion(name: string, sha256: string, limitChars?: number): PolicyVersion {
  return { policy: policy(name, limitChars), sha256, ref: `${name}@${sha256.slice(0, 12)}`, source: `${name}.toml` };
}

/** A 64-hex-digit sha256 made from one repeated digit. */
export function sha(digit: string): string {
  return digit.repeat(64);
}

export function callRecord(ref: string, caseId: string | undefined, overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    ref,
    time: "2026-03-01T12:00:00.000Z",
    policy: "investigation.bounded@aaaaaaaaaaaa",
    case: caseId,
    call_label: "extract-findings",
    surface: "openai.chat.completions",
    provider: "simulated",
    model: "gpt-test",
    route: "/openai/v1/chat/completions",
    preflight: {
      check: "preflight",
      system_chars: 120,
      message_chars: 4_000,
      tool_chars: 0,
      schema_chars: 800,
      other_chars: 0,
      cache_prefix_chars: 0,
      media_parts: 0,
      schema_deduplicated: false,
      total_chars: 4_920,
      reserve_chars: 1_500,
      conservative_total_chars: 6_420,
      target_chars: 10_000,
      limit_chars: 20_000,
      over_target: false,
      policy: "investigation.bounded@aaaaaaaaaaaa",
    },
    provider_check: undefined,
    decision: "sent",
    upstream_status: 200,
    validation: {
      valid: false,
      errors: [{ validation_path: "/findings/0", validation_keyword: "required", hint: "Add the member `source`." }],
    },
    repair: { rule: "choices-envelope", original: '{"choices":[{"findings":[]}]}' },
    projection_omitted: ["/properties/findings/items/pattern"],
    error: undefined,
    ...overrides,
  };
}

/** A named key as the admin API makes one, with every optional setting left out unless `overrides` gives it. */
export function namedKey(id: string, overrides: Partial<NamedKey> = {}): NamedKey {
  return {
    id,
    name: `name of ${id}`,
    team: undefined,
    policies: [],
    models: [],
    credentials: {},
    limits: undefined,
    createdAt: 1_000,
    expiresAt: undefined,
    revokedAt: undefined,
    lastUsedAt: undefined,
    source: "api",
    ...overrides,
  };
}

/** The tables of the store's schema, for tests that empty or drop them between stores. */
export const storeTables = [
  "policy_versions",
  "case_policies",
  "cached_prefixes",
  "response_histories",
  "calls",
  "sessions",
  "secrets",
  "jobs",
  "evidence",
  "source_indexes",
  "named_keys",
  "key_secrets",
  "limit_counters",
];

/** Runs the Store contract against the stores `createStore` makes, one fresh store per test. */
export function describeStore(name: string, createStore: () => Store | Promise<Store>): void {
  describe(name, () => {
    let store: Store;

    beforeEach(async () => {
      store = await createStore();
    });

    afterEach(async () => {
      await store.close();
    });

    describe("policy versions", () => {
      it("lists no versions when none was saved", async () => {
        expect(await store.listPolicyVersions()).toEqual([]);
      });

      it("returns a saved version with its policy deep-equal", async () => {
        const version = policyVersion("investigation.bounded", sha("a"));
        await store.savePolicyVersion(version);
        expect(await store.listPolicyVersions()).toEqual([version]);
      });

      it("lists versions oldest first", async () => {
        const first = policyVersion("investigation.bounded", sha("b"));
        const second = policyVersion("investigation.bounded", sha("a"), 30_000);
        const third = policyVersion("default", sha("c"));
        for (const version of [first, second, third]) await store.savePolicyVersion(version);
        expect(await store.listPolicyVersions()).toEqual([first, second, third]);
      });

      it("changes nothing when a known version is saved again", async () => {
        const first = policyVersion("investigation.bounded", sha("a"));
        const second = policyVersion("default", sha("b"));
        await store.savePolicyVersion(first);
        await store.savePolicyVersion(second);
        await store.savePolicyVersion({ ...first, source: "moved/investigation.bounded.toml" });
        expect(await store.listPolicyVersions()).toEqual([first, second]);
      });

      it("keeps a saved version unchanged when the caller later mutates its object", async () => {
        const version = policyVersion("investigation.bounded", sha("a"));
        await store.savePolicyVersion(version);
        version.policy.window.limit_chars = 1;
        expect((await store.listPolicyVersions())[0]?.policy.window.limit_chars).toBe(20_000);
      });
    });

    describe("case policy freezes", () => {
      it("freezes the first sha256 offered for a case and policy name and returns it", async () => {
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("a"))).sha256).toBe(sha("a"));
      });

      it("returns the frozen sha256 and ignores a different one offered later", async () => {
        await store.freezeCasePolicy("case-1", "investigation.bounded", sha("a"));
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("b"))).sha256).toBe(sha("a"));
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("c"))).sha256).toBe(sha("a"));
      });

      it("freezes each policy name of one case on its own", async () => {
        expect((await store.freezeCasePolicy("case-1", "case.interpretation", sha("a"))).sha256).toBe(sha("a"));
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("b"))).sha256).toBe(sha("b"));
        expect((await store.freezeCasePolicy("case-1", "case.interpretation", sha("c"))).sha256).toBe(sha("a"));
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("c"))).sha256).toBe(sha("b"));
      });

      it("freezes the same policy name separately for different cases", async () => {
        await store.freezeCasePolicy("case-1", "investigation.bounded", sha("a"));
        expect((await store.freezeCasePolicy("case-2", "investigation.bounded", sha("b"))).sha256).toBe(sha("b"));
      });

      it("does not confuse case and name pairs that concatenate alike", async () => {
        await store.freezeCasePolicy("case-1:", "x", sha("a"));
        expect((await store.freezeCasePolicy("case-1", ":x", sha("b"))).sha256).toBe(sha("b"));
      });

      it("freezes exactly one sha256 when many freezes of one case and name run at once", async () => {
        const offered = ["1", "2", "3", "4", "5", "6", "7", "8", "9"].map(sha);
        const frozen = await Promise.all(
          offered.map(
            async (sha256) => (await store.freezeCasePolicy("case-1", "investigation.bounded", sha256)).sha256,
          ),
        );
        expect(new Set(frozen).size).toBe(1);
        expect(offered).toContain(frozen[0]);
      });

      it("counts a case's invalid answers per policy name, lists them and resets them", async () => {
        expect(await store.freezeCasePolicy("case-1", "investigation.bounded", sha("a"))).toEqual({
          name: "investigation.bounded",
          sha256: sha("a"),
          invalidAnswers: 0,
        });
        await store.freezeCasePolicy("case-1", "case.interpretation", sha("b"));
        await store.freezeCasePolicy("case-2", "investigation.bounded", sha("a"));
        await Promise.all([1, 2, 3].map(() => store.addInvalidAnswer("case-1", "investigation.bounded")));
        await store.addInvalidAnswer("case-2", "investigation.bounded");
        // A pair never frozen is not made by a count.
        await store.addInvalidAnswer("case-3", "investigation.bounded");
        expect((await store.freezeCasePolicy("case-1", "investigation.bounded", sha("c"))).invalidAnswers).toBe(3);
        expect(await store.listCaseFreezes("case-1")).toEqual([
          { name: "case.interpretation", sha256: sha("b"), invalidAnswers: 0 },
          { name: "investigation.bounded", sha256: sha("a"), invalidAnswers: 3 },
        ]);
        expect(await store.listCaseFreezes("case-3")).toEqual([]);
        await store.resetInvalidAnswers("case-1");
        expect((await store.listCaseFreezes("case-1")).map((frozen) => frozen.invalidAnswers)).toEqual([0, 0]);
        expect((await store.listCaseFreezes("case-2"))[0]?.invalidAnswers).toBe(1);
      });
    });

    describe("evidence usage", () => {
      const kept = { principal: "p1", id: "E1", text: "ab😀", pageChars: 2, createdAt: 0, expiresAt: 5_000 };

      it("counts a principal's unexpired results and their code points, leaving one id out, and deletes one", async () => {
        await store.putEvidence(kept);
        await store.putEvidence({ ...kept, id: "E2", text: "xyz" });
        await store.putEvidence({ ...kept, id: "E3", expiresAt: 1_000 });
        await store.putEvidence({ ...kept, principal: "p2" });
        expect(await store.evidenceUsage("p1", 2_000, "")).toEqual({ count: 2, chars: 6 });
        expect(await store.evidenceUsage("p1", 2_000, "E2")).toEqual({ count: 1, chars: 3 });
        expect(await store.evidenceUsage("p3", 2_000, "")).toEqual({ count: 0, chars: 0 });
        await store.deleteEvidence("p1", "E1");
        expect(await store.getEvidence("p1", "E1", 0)).toBeUndefined();
        expect(await store.getEvidence("p2", "E1", 0)).toBeDefined();
      });
    });

    describe("source index and window usage", () => {
      const index = { principal: "p1", id: "S1", sources: ["D1", "😀"], createdAt: 0, expiresAt: 5_000 };
      const kept = { principal: "p1", id: "S1", text: "ab😀", pageChars: 2, createdAt: 0, expiresAt: 5_000 };

      it("counts a principal's unexpired source indexes and their ids' code points as kept, leaving one out", async () => {
        await store.putSourceIndex(index); // ["D1","😀"]: 10 code points
        await store.putSourceIndex({ ...index, id: "S2", sources: [] });
        await store.putSourceIndex({ ...index, id: "S3", expiresAt: 1_000 });
        await store.putSourceIndex({ ...index, principal: "p2" });
        expect(await store.sourceIndexUsage("p1", 2_000, "")).toEqual({ count: 2, chars: 12 });
        expect(await store.sourceIndexUsage("p1", 2_000, "S2")).toEqual({ count: 1, chars: 10 });
        expect(await store.sourceIndexUsage("p3", 2_000, "")).toEqual({ count: 0, chars: 0 });
        await store.deleteSourceIndex("p1", "S1");
        expect(await store.getSourceIndex("p1", "S1", 0)).toBeUndefined();
        expect(await store.getSourceIndex("p2", "S1", 0)).toBeDefined();
        expect(await store.sourceIndexUsage("p1", 2_000, "")).toEqual({ count: 1, chars: 2 });
      });

      it("counts every principal's unexpired results and source indexes together, leaving out the one replaced", async () => {
        const none = { kind: "evidence", principal: "", id: "" } as const;
        expect(await store.windowUsage(2_000, none)).toEqual({ count: 0, chars: 0 });
        await store.putSourceIndex(index);
        await store.putSourceIndex({ ...index, principal: "p2" });
        await store.putSourceIndex({ ...index, id: "S3", expiresAt: 1_000 });
        await store.putEvidence(kept);
        await store.putEvidence({ ...kept, principal: "p2", text: "xyz" });
        expect(await store.windowUsage(2_000, none)).toEqual({ count: 4, chars: 26 });
        // The same principal and id in the other table stays counted.
        expect(await store.windowUsage(2_000, { kind: "evidence", principal: "p1", id: "S1" })).toEqual({
          count: 3,
          chars: 23,
        });
        expect(await store.windowUsage(2_000, { kind: "source_index", principal: "p1", id: "S1" })).toEqual({
          count: 3,
          chars: 16,
        });
      });
    });

    describe("sweeps", () => {
      const session: SessionRecord = {
        id: "resp_s1",
        principal: "p-alice",
        model: "gpt-4.1",
        reasoning: undefined,
        profile: undefined,
        policy: "default@0123456789ab",
        selection: "{}",
        held: false,
        startedAt: 1_000,
        lastTurnAt: 1_000,
      };
      const job: JobRecord = {
        id: "resp_j1",
        principal: "p-alice",
        state: "completed",
        policy: "default@0123456789ab",
        createdAt: 1_000,
        endedAt: 1_500,
        heartbeatAt: 1_500,
        response: { id: "resp_j1" },
      };

      it("deletes what expired, ended or idled before its cutoff, and nothing else", async () => {
        await store.putCachedPrefix({
          name: "cachedContents/old",
          principal: "p1",
          chars: 1,
          schemaHashes: [],
          expiresAt: 2_000,
        });
        await store.putCachedPrefix({
          name: "cachedContents/new",
          principal: "p1",
          chars: 1,
          schemaHashes: [],
          expiresAt: 9_000,
        });
        await store.putResponseHistory({ id: "resp_old", chars: 1, outputKnown: true, expiresAt: 2_000 });
        await store.putResponseHistory({ id: "resp_new", chars: 1, outputKnown: true, expiresAt: 9_000 });
        const kept = { principal: "p1", text: "{}", pageChars: 10, createdAt: 0 };
        await store.putEvidence({ ...kept, id: "E-old", expiresAt: 2_000 });
        await store.putEvidence({ ...kept, id: "E-new", expiresAt: 9_000 });
        await store.putSourceIndex({ principal: "p1", id: "S-old", sources: [], createdAt: 0, expiresAt: 2_000 });
        await store.putSourceIndex({ principal: "p1", id: "S-new", sources: [], createdAt: 0, expiresAt: 9_000 });
        await store.putJob(job);
        await store.putJob({ ...job, id: "resp_j2", endedAt: 4_500 });
        await store.putJob({ ...job, id: "resp_j3", state: "in_progress", endedAt: undefined });
        await store.putJob({ ...job, id: "resp_j4", endedAt: 1_100 });
        await store.putSession(session);
        await store.putSession({ ...session, id: "resp_s2", lastTurnAt: 4_500 });
        // Idle long ago, but a turn of it is running: it stays.
        await store.putSession({ ...session, id: "resp_s3" });
        expect(await store.claimSessionTurn("resp_s3", "holder", 99_000, 3_000)).toBe(true);

        await store.sweep({
          now: 3_000,
          jobsEndedBefore: 2_000,
          jobTombstonesEndedBefore: 1_200,
          sessionsIdleSince: 2_000,
        });

        // Read as of time 0, so that only the sweep can have made a row absent.
        expect(await store.getCachedPrefix("cachedContents/old", 0)).toBeUndefined();
        expect(await store.getCachedPrefix("cachedContents/new", 0)).toBeDefined();
        expect(await store.getResponseHistory("resp_old", 0)).toBeUndefined();
        expect(await store.getResponseHistory("resp_new", 0)).toBeDefined();
        expect(await store.getEvidence("p1", "E-old", 0)).toBeUndefined();
        expect(await store.getEvidence("p1", "E-new", 0)).toBeDefined();
        expect(await store.getSourceIndex("p1", "S-old", 0)).toBeUndefined();
        expect(await store.getSourceIndex("p1", "S-new", 0)).toBeDefined();
        expect(await store.getJob("resp_j1")).toEqual({ ...job, response: null });
        expect(await store.getJob("resp_j4")).toBeUndefined();
        expect(await store.getJob("resp_j2")).toEqual({ ...job, id: "resp_j2", endedAt: 4_500 });
        expect(await store.getJob("resp_j3")).toBeDefined();
        expect(await store.getSession("resp_s1")).toBeUndefined();
        expect(await store.getSession("resp_s2")).toBeDefined();
        expect(await store.getSession("resp_s3")).toBeDefined();
      });

      it("keeps an expired job's id, principal, state and times as its tombstone, its answer and error dropped", async () => {
        const error = { code: "timeout", message: "The provider did not answer in time.", ref: "ref_0000000000000001" };
        const failed: JobRecord = {
          ...job,
          state: "failed",
          response: { id: "resp_j1", output: ["x".repeat(10_000)] },
          error,
        };
        await store.putJob(failed);
        const cutoffs = { now: 3_000, jobsEndedBefore: 2_000, jobTombstonesEndedBefore: 1_000, sessionsIdleSince: 0 };
        await store.sweep(cutoffs);
        await store.sweep(cutoffs);
        const { error: _dropped, ...kept } = failed;
        expect(await store.getJob("resp_j1")).toEqual({ ...kept, response: null });
        await store.sweep({ ...cutoffs, jobTombstonesEndedBefore: 1_501 });
        expect(await store.getJob("resp_j1")).toBeUndefined();
      });
    });

    describe("limit counters", () => {
      // Buckets as minutes since the epoch and amounts near the largest a limit takes (1e12), as the gateway uses them.
      const minute = 29_500_000;
      const big = 1_000_000_000_000;
      const rpm = { scope: "key:key_1", name: "requests_per_minute", bucket: minute };
      const chars = { scope: "key:key_1", name: "chars_per_day", bucket: minute };
      const other = { scope: "policy:default:p-alice", name: "requests_per_minute", bucket: minute };
      const range = (key: { scope: string; name: string }, from: number, to: number) => ({
        scope: key.scope,
        name: key.name,
        from,
        to,
      });

      it("charges counters that start at 0, and returns each charged counter's value in the charges' order", async () => {
        expect(await store.chargeCounters([])).toEqual([]);
        expect(
          await store.chargeCounters([
            { ...rpm, amount: 1, cap: 2, expires: 9_000 },
            { ...chars, amount: 500, cap: big, expires: 9_000 },
          ]),
        ).toEqual([
          { ...rpm, used: 1 },
          { ...chars, used: 500 },
        ]);
        expect(
          await store.chargeCounters([
            { ...chars, amount: big - 500, cap: big, expires: 9_000 },
            { ...rpm, amount: 1, cap: 2, expires: 9_000 },
          ]),
        ).toEqual([
          { ...chars, used: big },
          { ...rpm, used: 2 },
        ]);
        expect(await store.readCounters([range(rpm, minute, minute), range(chars, minute, minute)])).toEqual([
          { ...chars, used: big },
          { ...rpm, used: 2 },
        ]);
      });

      it("charges none when one counter among several would pass its cap, a new one or a kept one", async () => {
        await store.chargeCounters([{ ...rpm, amount: 2, cap: 2, expires: 9_000 }]);
        const fresh = { ...other, bucket: minute + 1 };
        // The refused counter comes last, so that a store that applied the rows before it would show them.
        expect(
          await store.chargeCounters([
            { ...chars, amount: 10, cap: 100, expires: 9_000 },
            { ...fresh, amount: 1, cap: 5, expires: 9_000 },
            { ...other, amount: 3, cap: 5, expires: 9_000 },
            { ...rpm, amount: 1, cap: 2, expires: 9_000 },
          ]),
        ).toBeUndefined();
        // A new counter past its cap from the start is refused too, and with it the rest.
        expect(
          await store.chargeCounters([
            { ...chars, amount: 10, cap: 100, expires: 9_000 },
            { ...fresh, amount: 6, cap: 5, expires: 9_000 },
          ]),
        ).toBeUndefined();
        const all = [range(rpm, 0, big), range(chars, 0, big), range(other, 0, big)];
        expect(await store.readCounters(all)).toEqual([{ ...rpm, used: 2 }]);
        // A charge of 0 reads a counter within its cap, and refuses one above it.
        expect(await store.chargeCounters([{ ...rpm, amount: 0, cap: 2, expires: 9_000 }])).toEqual([
          { ...rpm, used: 2 },
        ]);
        expect(await store.chargeCounters([{ ...rpm, amount: 0, cap: 1, expires: 9_000 }])).toBeUndefined();
      });

      it("holds each counter to the cap of the charge at hand, which replaces the one before", async () => {
        expect(await store.chargeCounters([{ ...rpm, amount: 5, cap: 10, expires: 9_000 }])).toBeDefined();
        expect(await store.chargeCounters([{ ...rpm, amount: 1, cap: 5, expires: 9_000 }])).toBeUndefined();
        expect(await store.chargeCounters([{ ...rpm, amount: 3, cap: 8, expires: 9_000 }])).toEqual([
          { ...rpm, used: 8 },
        ]);
        // A higher cap admits again what a lower one refused.
        expect(await store.chargeCounters([{ ...rpm, amount: 1, cap: 8, expires: 9_000 }])).toBeUndefined();
        expect(await store.chargeCounters([{ ...rpm, amount: 1, cap: 20, expires: 9_000 }])).toEqual([
          { ...rpm, used: 9 },
        ]);
      });

      it("sums the charges of one counter named twice in a call, under the smaller cap", async () => {
        expect(
          await store.chargeCounters([
            { ...rpm, amount: 2, cap: 10, expires: 9_000 },
            { ...chars, amount: 1, cap: 10, expires: 9_000 },
            { ...rpm, amount: 3, cap: 10, expires: 9_000 },
          ]),
        ).toEqual([
          { ...rpm, used: 5 },
          { ...chars, used: 1 },
          { ...rpm, used: 5 },
        ]);
        expect(
          await store.chargeCounters([
            { ...rpm, amount: 1, cap: 10, expires: 9_000 },
            { ...rpm, amount: 1, cap: 6, expires: 9_000 },
          ]),
        ).toBeUndefined();
        expect(await store.readCounters([range(rpm, minute, minute)])).toEqual([{ ...rpm, used: 5 }]);
      });

      it("charges many counters at once all or none (more than one statement's worth on D1)", async () => {
        const counterAt = (index: number) => ({ ...rpm, name: `limit_${100 + index}` });
        const many = Array.from({ length: 25 }, (_, index) => counterAt(index));
        const all = many.map((counter) => range(counter, minute, minute));
        await store.chargeCounters([{ ...counterAt(24), amount: 3, cap: 3, expires: 9_000 }]);
        await store.chargeCounters([{ ...counterAt(0), amount: 1, cap: 3, expires: 9_000 }]);
        // Past its cap the last of them, then the first: either way none is charged.
        for (const refused of [24, 0]) {
          const charges = many.map((counter, index) => ({
            ...counter,
            amount: index === 0 ? 3 : 1,
            cap: index === refused || index === 24 ? 3 : 10,
            expires: 9_000,
          }));
          expect(await store.chargeCounters(charges)).toBeUndefined();
          expect((await store.readCounters(all)).map((counter) => counter.used)).toEqual([1, 3]);
        }
        const charged = await store.chargeCounters(
          many.map((counter) => ({ ...counter, amount: 1, cap: 10, expires: 9_000 })),
        );
        expect(charged?.map((counter) => counter.used)).toEqual([2, ...new Array(23).fill(1), 4]);
        await store.changeCounters(many.map((counter) => ({ ...counter, amount: 2, expires: 9_000 })));
        await store.changeCounters(many.map((counter) => ({ ...counter, amount: -1, expires: 9_000 })));
        expect((await store.readCounters(all)).map((counter) => counter.used)).toEqual([
          3,
          ...new Array(23).fill(2),
          5,
        ]);
      });

      it("changes a counter whatever its cap, never below 0, and refuses the next charge of one over its cap", async () => {
        await store.chargeCounters([{ ...chars, amount: 100, cap: 1_000, expires: 9_000 }]);
        // A reconciliation past the cap is kept: a provider's count is what it is.
        await store.changeCounters([{ ...chars, amount: 1_500, expires: 9_000 }]);
        expect(await store.readCounters([range(chars, minute, minute)])).toEqual([{ ...chars, used: 1_600 }]);
        expect(await store.chargeCounters([{ ...chars, amount: 1, cap: 1_000, expires: 9_000 }])).toBeUndefined();
        await store.changeCounters([{ ...chars, amount: -700, expires: 9_000 }]);
        expect(await store.chargeCounters([{ ...chars, amount: 100, cap: 1_000, expires: 9_000 }])).toEqual([
          { ...chars, used: 1_000 },
        ]);
        // What gives back more than a counter holds leaves it at 0.
        await store.changeCounters([
          { ...chars, amount: -big, expires: 9_000 },
          { ...rpm, amount: 3, expires: 9_000 },
        ]);
        expect(await store.readCounters([range(chars, minute, minute), range(rpm, minute, minute)])).toEqual([
          { ...chars, used: 0 },
          { ...rpm, used: 3 },
        ]);
        expect(await store.chargeCounters([{ ...chars, amount: 1_000, cap: 1_000, expires: 9_000 }])).toEqual([
          { ...chars, used: 1_000 },
        ]);
        // Changes of one counter named twice are summed; a counter never charged is not made by giving back.
        await store.changeCounters([
          { ...rpm, amount: 2, expires: 9_000 },
          { ...rpm, amount: -1, expires: 9_000 },
          { ...other, amount: -5, expires: 9_000 },
          { ...other, bucket: minute + 1, amount: 0, expires: 9_000 },
        ]);
        expect(await store.readCounters([range(rpm, minute, minute), range(other, 0, big)])).toEqual([
          { ...rpm, used: 4 },
        ]);
        await store.changeCounters([]);
      });

      it("reads the counters of each range, bounds included, leaving out those never charged", async () => {
        for (const bucket of [minute - 2, minute - 1, minute, minute + 1, minute + 3]) {
          await store.chargeCounters([{ ...rpm, bucket, amount: bucket - minute + 10, cap: 100, expires: 9_000 }]);
        }
        await store.chargeCounters([{ ...other, amount: 7, cap: 100, expires: 9_000 }]);
        await store.chargeCounters([{ ...chars, amount: 9, cap: 100, expires: 9_000 }]);
        expect(await store.readCounters([range(rpm, minute - 1, minute + 3)])).toEqual([
          { ...rpm, bucket: minute - 1, used: 9 },
          { ...rpm, used: 10 },
          { ...rpm, bucket: minute + 1, used: 11 },
          { ...rpm, bucket: minute + 3, used: 13 },
        ]);
        expect(
          await store.readCounters([
            range(other, minute, minute),
            range(rpm, minute - 2, minute - 2),
            range({ scope: "key:key_2", name: rpm.name }, 0, big),
            range(rpm, minute + 1, minute),
          ]),
        ).toEqual([
          { ...rpm, bucket: minute - 2, used: 8 },
          { ...other, used: 7 },
        ]);
        expect(await store.readCounters([])).toEqual([]);
        // Many ranges at once (more than one statement's worth on D1).
        const many = Array.from({ length: 45 }, (_, index) => range(rpm, minute - 2 + index, minute - 2 + index));
        expect((await store.readCounters(many)).map((counter) => counter.used)).toEqual([8, 9, 10, 11, 13]);
      });

      it("keeps scopes and names apart whatever characters they hold", async () => {
        const odd = { scope: 'key:"a",\u0000\ud800', name: "requests_per_minute", bucket: minute };
        const twin = { scope: "key:", name: '"a",\u0000\ud800', bucket: minute };
        await store.chargeCounters([{ ...odd, amount: 1, cap: 5, expires: 9_000 }]);
        await store.chargeCounters([{ ...twin, amount: 2, cap: 5, expires: 9_000 }]);
        expect(await store.readCounters([range(odd, minute, minute)])).toEqual([{ ...odd, used: 1 }]);
        expect(await store.readCounters([range(twin, minute, minute)])).toEqual([{ ...twin, used: 2 }]);
      });

      it("is deleted by a sweep once expired, the later of its expiries kept", async () => {
        await store.chargeCounters([{ ...rpm, amount: 1, cap: 5, expires: 2_000 }]);
        await store.chargeCounters([{ ...rpm, amount: 1, cap: 5, expires: 1_000 }]);
        await store.chargeCounters([{ ...chars, amount: 1, cap: 5, expires: 3_000 }]);
        await store.changeCounters([{ ...other, amount: 1, expires: 3_001 }]);
        const cutoffs = { jobsEndedBefore: 0, jobTombstonesEndedBefore: 0, sessionsIdleSince: 0 };
        await store.sweep({ ...cutoffs, now: 1_999 });
        const all = [range(rpm, 0, big), range(chars, 0, big), range(other, 0, big)];
        expect(await store.readCounters(all)).toHaveLength(3);
        await store.sweep({ ...cutoffs, now: 3_000 });
        expect(await store.readCounters(all)).toEqual([{ ...other, used: 1 }]);
        // A swept counter starts again at 0.
        expect(await store.chargeCounters([{ ...chars, amount: 5, cap: 5, expires: 9_000 }])).toEqual([
          { ...chars, used: 5 },
        ]);
      });

      it("admits exactly up to the cap when many charge one counter at once", async () => {
        // Reads side by side first, so that a store with a pool of connections has several open.
        await Promise.all(Array.from({ length: 10 }, () => store.readCounters([range(rpm, 0, 0)])));
        const charged = await Promise.all(
          Array.from({ length: 60 }, (_, index) =>
            store.chargeCounters(
              index % 2 === 0
                ? [
                    { ...rpm, amount: 1, cap: 25, expires: 9_000 },
                    { ...chars, amount: 1, cap: 1_000, expires: 9_000 },
                  ]
                : [
                    { ...chars, amount: 1, cap: 1_000, expires: 9_000 },
                    { ...rpm, amount: 1, cap: 25, expires: 9_000 },
                  ],
            ),
          ),
        );
        expect(charged.filter((values) => values !== undefined)).toHaveLength(25);
        expect(await store.readCounters([range(rpm, minute, minute), range(chars, minute, minute)])).toEqual([
          { ...chars, used: 25 },
          { ...rpm, used: 25 },
        ]);
      });
    });

    describe("source indexes", () => {
      const index = { principal: "p1", id: "S-1", sources: ["D1", "D2"], createdAt: 1_000, expiresAt: 5_000 };

      it("keeps a source index per principal until it expires, and replaces one of the same id", async () => {
        await store.putSourceIndex(index);
        expect(await store.getSourceIndex("p1", "S-1", 2_000)).toEqual(index);
        expect(await store.getSourceIndex("p2", "S-1", 2_000)).toBeUndefined();
        expect(await store.getSourceIndex("p1", "S-1", 5_000)).toBeUndefined();
        await store.putSourceIndex({ ...index, sources: ["D3"], expiresAt: 9_000 });
        expect((await store.getSourceIndex("p1", "S-1", 6_000))?.sources).toEqual(["D3"]);
      });
    });

    describe("cached prefixes", () => {
      const prefix = {
        name: "cachedContents/abc123",
        principal: "p-alice",
        chars: 48_000,
        schemaHashes: [sha("d"), sha("e")],
        expiresAt: 10_000,
      };

      it("returns a stored record before its expiry", async () => {
        await store.putCachedPrefix(prefix);
        expect(await store.getCachedPrefix(prefix.name, 9_999)).toEqual(prefix);
      });

      it("returns undefined for an unknown name", async () => {
        expect(await store.getCachedPrefix("cachedContents/unknown", 0)).toBeUndefined();
      });

      it("keeps the principal a record was created for, and the latest one when the name is stored again", async () => {
        await store.putCachedPrefix(prefix);
        expect((await store.getCachedPrefix(prefix.name, 0))?.principal).toBe("p-alice");
        await store.putCachedPrefix({ ...prefix, principal: "p-bob" });
        expect((await store.getCachedPrefix(prefix.name, 0))?.principal).toBe("p-bob");
      });

      it("keeps the principal of a record whose expiry is updated", async () => {
        await store.putCachedPrefix(prefix);
        await store.updateCachedPrefixExpiry(prefix.name, 30_000);
        expect((await store.getCachedPrefix(prefix.name, 20_000))?.principal).toBe("p-alice");
      });

      it("treats a record as absent from its expiry on", async () => {
        await store.putCachedPrefix(prefix);
        expect(await store.getCachedPrefix(prefix.name, 10_000)).toBeUndefined();
      });

      it("deletes an expired record once it was found expired", async () => {
        await store.putCachedPrefix(prefix);
        await store.getCachedPrefix(prefix.name, 10_000);
        expect(await store.getCachedPrefix(prefix.name, 0)).toBeUndefined();
      });

      it("replaces a record stored again under the same name", async () => {
        await store.putCachedPrefix(prefix);
        const replaced = { ...prefix, chars: 1_200, schemaHashes: [], expiresAt: 20_000 };
        await store.putCachedPrefix(replaced);
        expect(await store.getCachedPrefix(prefix.name, 15_000)).toEqual(replaced);
      });

      it("extends the life of a record whose expiry is updated", async () => {
        await store.putCachedPrefix(prefix);
        await store.updateCachedPrefixExpiry(prefix.name, 30_000);
        expect(await store.getCachedPrefix(prefix.name, 20_000)).toEqual({ ...prefix, expiresAt: 30_000 });
      });

      it("shortens the life of a record whose expiry is brought forward", async () => {
        await store.putCachedPrefix(prefix);
        await store.updateCachedPrefixExpiry(prefix.name, 5_000);
        expect(await store.getCachedPrefix(prefix.name, 6_000)).toBeUndefined();
      });

      it("ignores an expiry update for an unknown name", async () => {
        await store.updateCachedPrefixExpiry("cachedContents/unknown", 30_000);
        expect(await store.getCachedPrefix("cachedContents/unknown", 0)).toBeUndefined();
      });

      it("forgets a deleted record", async () => {
        await store.putCachedPrefix(prefix);
        await store.deleteCachedPrefix(prefix.name);
        expect(await store.getCachedPrefix(prefix.name, 0)).toBeUndefined();
      });

      it("ignores the deletion of an unknown name", async () => {
        await store.putCachedPrefix(prefix);
        await store.deleteCachedPrefix("cachedContents/unknown");
        expect(await store.getCachedPrefix(prefix.name, 0)).toEqual(prefix);
      });
    });

    describe("response histories", () => {
      const history = { id: "resp_123", chars: 64_000, outputKnown: true, expiresAt: 10_000 };
      const pending = { id: "resp_bg", chars: 3_000, outputKnown: false, expiresAt: 10_000 };

      it("returns a stored record before its expiry", async () => {
        await store.putResponseHistory(history);
        expect(await store.getResponseHistory(history.id, 9_999)).toEqual(history);
      });

      it("returns a record whose output is not known yet as such", async () => {
        await store.putResponseHistory(pending);
        expect(await store.getResponseHistory(pending.id, 0)).toEqual(pending);
      });

      it("returns undefined for an unknown id", async () => {
        expect(await store.getResponseHistory("resp_unknown", 0)).toBeUndefined();
      });

      it("treats a record as absent from its expiry on", async () => {
        await store.putResponseHistory(history);
        expect(await store.getResponseHistory(history.id, 10_000)).toBeUndefined();
      });

      it("deletes an expired record once it was found expired", async () => {
        await store.putResponseHistory(history);
        await store.getResponseHistory(history.id, 10_000);
        expect(await store.getResponseHistory(history.id, 0)).toBeUndefined();
      });

      it("replaces a record stored again under the same id", async () => {
        await store.putResponseHistory(pending);
        await store.putResponseHistory({ ...pending, chars: 70_000, outputKnown: true, expiresAt: 20_000 });
        expect(await store.getResponseHistory(pending.id, 15_000)).toEqual({
          ...pending,
          chars: 70_000,
          outputKnown: true,
          expiresAt: 20_000,
        });
      });

      it("adds the output to a record whose output was unknown and marks it known", async () => {
        await store.putResponseHistory(pending);
        await store.completeResponseHistory(pending.id, 25_000);
        expect(await store.getResponseHistory(pending.id, 0)).toEqual({
          ...pending,
          chars: 28_000,
          outputKnown: true,
        });
      });

      it("adds the output once however often the record is completed", async () => {
        await store.putResponseHistory(pending);
        await store.completeResponseHistory(pending.id, 500);
        await store.completeResponseHistory(pending.id, 500);
        expect((await store.getResponseHistory(pending.id, 0))?.chars).toBe(3_500);
      });

      it("adds the output once when many completions of one record run at once", async () => {
        await store.putResponseHistory(pending);
        await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => store.completeResponseHistory(pending.id, 500)));
        expect(await store.getResponseHistory(pending.id, 0)).toEqual({ ...pending, chars: 3_500, outputKnown: true });
      });

      it("leaves a record whose output is known unchanged when it is completed", async () => {
        await store.putResponseHistory(history);
        await store.completeResponseHistory(history.id, 500);
        expect(await store.getResponseHistory(history.id, 0)).toEqual(history);
      });

      it("creates no record when an unknown id is completed", async () => {
        await store.completeResponseHistory("resp_unknown", 500);
        expect(await store.getResponseHistory("resp_unknown", 0)).toBeUndefined();
      });

      it("forgets a deleted record", async () => {
        await store.putResponseHistory(pending);
        await store.deleteResponseHistory(pending.id);
        expect(await store.getResponseHistory(pending.id, 0)).toBeUndefined();
      });

      it("ignores the deletion of an unknown id", async () => {
        await store.putResponseHistory(history);
        await store.deleteResponseHistory("resp_unknown");
        expect(await store.getResponseHistory(history.id, 0)).toEqual(history);
      });
    });

    describe("sessions", () => {
      const session: SessionRecord = {
        id: "resp_first",
        principal: "p-alice",
        model: "gpt-4.1",
        reasoning: "low",
        profile: undefined,
        policy: "investigation.bounded@0123456789ab",
        selection: '{"name":"gpt-4.1"}',
        held: true,
        startedAt: 1_000,
        lastTurnAt: 1_000,
      };

      it("keeps a session as its first turn made it, and tells another principal's apart", async () => {
        expect(await store.putSession(session)).toBe(true);
        expect(await store.putSession({ ...session, model: "other" })).toBe(true);
        expect(await store.putSession({ ...session, principal: "p-mallory" })).toBe(false);
        expect(await store.getSession(session.id)).toEqual(session);
        expect(await store.getSession("resp_unknown")).toBeUndefined();
      });

      it("notes a later turn, never an earlier one", async () => {
        await store.putSession(session);
        await store.touchSession(session.id, 5_000);
        await store.touchSession(session.id, 3_000);
        expect((await store.getSession(session.id))?.lastTurnAt).toBe(5_000);
      });

      it("gives a session's turn to one holder at a time, until it is given back or runs out", async () => {
        await store.putSession(session);
        expect(await store.claimSessionTurn(session.id, "ref_a", 2_000, 1_000)).toBe(true);
        expect(await store.claimSessionTurn(session.id, "ref_b", 2_000, 1_500)).toBe(false);
        expect(await store.claimSessionTurn(session.id, "ref_b", 3_000, 2_000)).toBe(true);
        await store.releaseSessionTurn(session.id, "ref_a");
        expect(await store.claimSessionTurn(session.id, "ref_c", 4_000, 2_100)).toBe(false);
        await store.releaseSessionTurn(session.id, "ref_b");
        expect(await store.claimSessionTurn(session.id, "ref_c", 4_000, 2_100)).toBe(true);
      });

      it("keeps a turn's session, previous response, provider id and items with its history", async () => {
        const turn = {
          id: "resp_second",
          chars: 120,
          outputKnown: true,
          expiresAt: 10_000,
          session: "resp_first",
          previous: "resp_first",
          upstream: "resp_provider",
          items: [{ type: "message", role: "user", content: "Welches Wort? 😀" }],
        };
        await store.putResponseHistory(turn);
        expect(await store.getResponseHistory(turn.id, 0)).toEqual(turn);
      });

      it("makes a secret once and gives the same one after", async () => {
        const secret = await store.secret("principal");
        expect(secret).toMatch(/^[0-9a-f]{64}$/);
        expect(await store.secret("principal")).toBe(secret);
        expect(await store.secret("other")).not.toBe(secret);
      });
    });

    describe("texts a client chose", () => {
      // U+0000 (which PostgreSQL's text refuses), lone surrogates (which UTF-8 cannot hold), and the store's own
      // escape mark at the start: each must read back as it was written, and be found again by it.
      const odd = ["gpt-\u0000x", "gpt-\ud800", "\udc00gpt", '\uffff"gpt"', "\uffffgpt", "gpt-4.1 😀"];

      it("keeps a session's id, model, reasoning level and profile as they were", async () => {
        for (const [index, text] of odd.entries()) {
          const session: SessionRecord = {
            id: `resp_${text}`,
            principal: "p-alice",
            model: text,
            reasoning: text,
            profile: text,
            policy: "default@0123456789ab",
            selection: JSON.stringify({ name: text }),
            held: false,
            startedAt: index,
            lastTurnAt: index,
          };
          expect(await store.putSession(session)).toBe(true);
          expect(await store.getSession(session.id)).toEqual(session);
          await store.touchSession(session.id, 5_000);
          expect(await store.claimSessionTurn(session.id, `ref_${text}`, 9_000, 6_000)).toBe(true);
        }
      });

      it("keeps a job, a response history, a cached prefix, evidence and a source index under such ids", async () => {
        for (const text of odd) {
          const job: JobRecord = {
            id: `resp_${text}`,
            principal: "p-alice",
            state: "queued",
            policy: "default@0123456789ab",
            createdAt: 1_000,
            heartbeatAt: 1_000,
            response: { id: `resp_${text}`, model: text },
          };
          await store.putJob(job);
          expect(await store.getJob(job.id)).toEqual(job);
          expect(await store.updateJob(job.id, ["queued"], { state: "in_progress" })).toMatchObject({ id: job.id });
          const history = {
            id: text,
            chars: 1,
            outputKnown: true,
            expiresAt: 10_000,
            session: text,
            previous: text,
            upstream: text,
            items: [text],
          };
          await store.putResponseHistory(history);
          expect(await store.getResponseHistory(text, 0)).toEqual(history);
          const prefix = { name: text, principal: "p-alice", chars: 1, schemaHashes: [text], expiresAt: 10_000 };
          await store.putCachedPrefix(prefix);
          expect(await store.getCachedPrefix(text, 0)).toEqual(prefix);
          const evidence = { principal: "p-alice", id: text, text: JSON.stringify([text]), pageChars: 200 };
          await store.putEvidence({ ...evidence, createdAt: 0, expiresAt: 10_000 });
          expect(await store.getEvidence("p-alice", text, 0)).toMatchObject(evidence);
          const index = { principal: "p-alice", id: text, sources: [text], createdAt: 0, expiresAt: 10_000 };
          await store.putSourceIndex(index);
          expect(await store.getSourceIndex("p-alice", text, 0)).toEqual(index);
        }
      });
    });

    describe("answer jobs", () => {
      const job: JobRecord = {
        id: "resp_job",
        principal: "p-alice",
        state: "queued",
        policy: "default@0123456789ab",
        createdAt: 1_000,
        heartbeatAt: 1_000,
        response: { id: "resp_job", status: "queued" },
      };

      it("keeps a job and moves it only from the states given", async () => {
        await store.putJob(job);
        expect(await store.getJob(job.id)).toEqual(job);
        const started = await store.updateJob(job.id, ["queued"], { state: "in_progress", startedAt: 2_000 });
        expect(started).toMatchObject({ state: "in_progress", startedAt: 2_000 });
        const refused = await store.updateJob(job.id, ["queued"], { state: "cancelled", endedAt: 3_000 });
        expect(refused).toMatchObject({ state: "in_progress" });
        expect(refused?.endedAt).toBeUndefined();
        const error = { code: "timeout", message: "The provider did not answer in time.", ref: "ref_0000000000000001" };
        const failed = await store.updateJob(job.id, ["in_progress"], { state: "failed", endedAt: 4_000, error });
        expect(failed).toMatchObject({ state: "failed", endedAt: 4_000, error });
        expect(await store.updateJob("resp_unknown", ["queued"], { state: "cancelled" })).toBeUndefined();
      });

      it("notes a runner's beat, never an earlier one", async () => {
        await store.putJob(job);
        await store.beatJob(job.id, 9_000);
        await store.beatJob(job.id, 5_000);
        expect((await store.getJob(job.id))?.heartbeatAt).toBe(9_000);
      });
    });

    describe("evidence", () => {
      const evidence = {
        principal: "p-alice",
        id: "E000001",
        text: '{"rows":["😀"]}',
        pageChars: 1600,
        createdAt: 0,
        expiresAt: 10_000,
      };

      it("keeps evidence per principal until it expires, and replaces it under the same id", async () => {
        await store.putEvidence(evidence);
        expect(await store.getEvidence("p-alice", "E000001", 9_999)).toEqual(evidence);
        expect(await store.getEvidence("p-mallory", "E000001", 0)).toBeUndefined();
        expect(await store.getEvidence("p-alice", "E000001", 10_000)).toBeUndefined();
        await store.putEvidence({ ...evidence, text: "{}", expiresAt: 20_000 });
        expect(await store.getEvidence("p-alice", "E000001", 15_000)).toMatchObject({ text: "{}" });
      });
    });

    describe("call records", () => {
      it("returns an appended record by its ref", async () => {
        const record = callRecord("ref_0000000000000001", "case-1");
        await store.appendCall(record);
        expect(await store.getCall(record.ref)).toEqual(record);
      });

      it("returns undefined for an unknown ref", async () => {
        expect(await store.getCall("ref_ffffffffffffffff")).toBeUndefined();
      });

      it("lists the records of one case oldest first, without other cases", async () => {
        await store.appendCall(callRecord("ref_3", "case-1"));
        await store.appendCall(callRecord("ref_1", "case-2"));
        await store.appendCall(callRecord("ref_2", "case-1", { decision: "rejected", error: "PROMPT_TOO_LARGE" }));
        await store.appendCall(callRecord("ref_4", undefined));
        await store.appendCall(callRecord("ref_0", "case-1"));
        const listed = await store.listCallsOfCase("case-1", 10);
        expect(listed.map((record) => record.ref)).toEqual(["ref_3", "ref_2", "ref_0"]);
        expect(listed[1]).toEqual(callRecord("ref_2", "case-1", { decision: "rejected", error: "PROMPT_TOO_LARGE" }));
      });

      it("lists at most `limit` records of a case, the oldest", async () => {
        for (const ref of ["ref_1", "ref_2", "ref_3"]) await store.appendCall(callRecord(ref, "case-1"));
        expect((await store.listCallsOfCase("case-1", 2)).map((record) => record.ref)).toEqual(["ref_1", "ref_2"]);
        expect(await store.listCallsOfCase("case-1", 0)).toEqual([]);
      });

      it("lists nothing for an unknown case", async () => {
        await store.appendCall(callRecord("ref_1", "case-1"));
        expect(await store.listCallsOfCase("case-unknown", 10)).toEqual([]);
      });

      it("ignores a record appended again under a known ref", async () => {
        const first = callRecord("ref_1", "case-1");
        await store.appendCall(first);
        await store.appendCall(callRecord("ref_2", "case-1"));
        await store.appendCall(callRecord("ref_1", "case-1", { decision: "failed", upstream_status: 502 }));
        expect(await store.getCall("ref_1")).toEqual(first);
        expect((await store.listCallsOfCase("case-1", 10)).map((record) => record.ref)).toEqual(["ref_1", "ref_2"]);
      });

      it("keeps an appended record unchanged when the caller later mutates its object", async () => {
        const record = callRecord("ref_1", "case-1");
        await store.appendCall(record);
        record.decision = "failed";
        expect((await store.getCall("ref_1"))?.decision).toBe("sent");
      });
    });

    describe("call listings", () => {
      /** Six calls, in this order, that differ in case, decision, policy, surface and error. */
      const calls = [
        callRecord("ref_a", "case-1"),
        callRecord("ref_b", undefined, { surface: "gemini", policy: "investigation.bounded.v1@bbbbbbbbbbbb" }),
        callRecord("ref_c", "case-1", { decision: "rejected", error: "INVESTIGATION_PROMPT_LIMIT" }),
        callRecord("ref_d", "case-2", { decision: "failed", error: "timeout", surface: "anthropic" }),
        callRecord("ref_e", undefined, { policy: "investigation.bounded@cccccccccccc", surface: "gemini" }),
        callRecord("ref_f", "case-1", { policy: undefined, decision: "rejected", error: "INVALID_REQUEST" }),
      ];
      const refsOf = (page: { calls: CallRecord[] } | undefined) => page?.calls.map((record) => record.ref);

      beforeEach(async () => {
        for (const record of calls) await store.appendCall(record);
      });

      it("lists every call newest first, whole records", async () => {
        const page = await store.listCalls({ order: "newest", limit: 10 });
        expect(refsOf(page)).toEqual(["ref_f", "ref_e", "ref_d", "ref_c", "ref_b", "ref_a"]);
        expect(page?.calls[2]).toEqual(calls[3]);
        expect(page?.more).toBe(false);
      });

      it("lists a case oldest first", async () => {
        const page = await store.listCalls({ order: "oldest", limit: 10, case: "case-1" });
        expect(refsOf(page)).toEqual(["ref_a", "ref_c", "ref_f"]);
      });

      it("pages newest first: a page of `limit`, then the next after its last ref, until no more", async () => {
        const first = await store.listCalls({ order: "newest", limit: 4 });
        expect(first).toMatchObject({ more: true });
        expect(refsOf(first)).toEqual(["ref_f", "ref_e", "ref_d", "ref_c"]);
        const second = await store.listCalls({ order: "newest", limit: 4, after: "ref_c" });
        expect(refsOf(second)).toEqual(["ref_b", "ref_a"]);
        expect(second?.more).toBe(false);
      });

      it("pages a case oldest first after a ref", async () => {
        const first = await store.listCalls({ order: "oldest", limit: 2, case: "case-1" });
        expect(first).toMatchObject({ more: true });
        const second = await store.listCalls({ order: "oldest", limit: 2, case: "case-1", after: "ref_c" });
        expect(refsOf(second)).toEqual(["ref_f"]);
        expect(second?.more).toBe(false);
      });

      it("says there are no more when the last page is exactly full", async () => {
        const page = await store.listCalls({ order: "newest", limit: 2, after: "ref_c" });
        expect(refsOf(page)).toEqual(["ref_b", "ref_a"]);
        expect(page?.more).toBe(false);
      });

      it("continues after a ref that the filters would leave out", async () => {
        const page = await store.listCalls({ order: "newest", limit: 10, surface: "gemini", after: "ref_d" });
        expect(refsOf(page)).toEqual(["ref_b"]);
      });

      it("answers undefined for a cursor that is no stored ref", async () => {
        expect(await store.listCalls({ order: "newest", limit: 10, after: "ref_unknown" })).toBeUndefined();
      });

      it("filters by decision", async () => {
        expect(refsOf(await store.listCalls({ order: "newest", limit: 10, decision: "rejected" }))).toEqual([
          "ref_f",
          "ref_c",
        ]);
      });

      it("filters by surface", async () => {
        expect(refsOf(await store.listCalls({ order: "newest", limit: 10, surface: "gemini" }))).toEqual([
          "ref_e",
          "ref_b",
        ]);
      });

      it("filters by error code", async () => {
        expect(refsOf(await store.listCalls({ order: "newest", limit: 10, error: "timeout" }))).toEqual(["ref_d"]);
      });

      it("filters by policy name, every version of it and no other name that begins alike", async () => {
        const page = await store.listCalls({ order: "newest", limit: 10, policy: "investigation.bounded" });
        expect(refsOf(page)).toEqual(["ref_e", "ref_d", "ref_c", "ref_a"]);
      });

      it("filters by one policy version", async () => {
        const page = await store.listCalls({
          order: "newest",
          limit: 10,
          policy: "investigation.bounded@cccccccccccc",
        });
        expect(refsOf(page)).toEqual(["ref_e"]);
      });

      it("applies every filter given at once", async () => {
        const page = await store.listCalls({ order: "oldest", limit: 10, case: "case-1", decision: "rejected" });
        expect(refsOf(page)).toEqual(["ref_c", "ref_f"]);
        const none = await store.listCalls({ order: "newest", limit: 10, surface: "gemini", error: "timeout" });
        expect(none).toEqual({ calls: [], more: false });
      });

      it("leaves calls without a policy out of a policy filter only", async () => {
        expect(refsOf(await store.listCalls({ order: "newest", limit: 1 }))).toEqual(["ref_f"]);
        const page = await store.listCalls({ order: "newest", limit: 10, policy: "investigation" });
        expect(page).toEqual({ calls: [], more: false });
      });

      it("lists nothing at limit 0, and says whether calls match", async () => {
        expect(await store.listCalls({ order: "newest", limit: 0 })).toEqual({ calls: [], more: true });
        expect(await store.listCalls({ order: "newest", limit: 0, case: "case-9" })).toEqual({
          calls: [],
          more: false,
        });
      });
    });

    describe("call attribution and usage", () => {
      const keyA = "key_00000000000000000000000a";
      const keyB = "key_00000000000000000000000b";
      const keyC = "key_00000000000000000000000c";
      const attributed = (id: string, team: string | null) => ({ key: { id, name: `name of ${id}`, team } });
      const checked = (conservative: number) => ({
        provider_check: {
          check: "provider" as const,
          system_chars: 0,
          message_chars: conservative,
          tool_chars: 0,
          schema_chars: 0,
          other_chars: 0,
          cache_prefix_chars: 0,
          media_parts: 0,
          schema_deduplicated: false,
          total_chars: conservative,
          reserve_chars: 0,
          conservative_total_chars: conservative,
          target_chars: 10_000,
          limit_chars: 20_000,
          over_target: false,
          policy: "investigation.bounded@aaaaaaaaaaaa",
        },
      });
      const calls = [
        callRecord("use_1", undefined, {
          time: "2026-03-01T10:00:00.000Z",
          ...attributed(keyA, "team-a"),
          ...checked(1_000),
          usage: { input_tokens: 250, output_tokens: 40 },
        }),
        callRecord("use_2", undefined, {
          time: "2026-03-01T23:59:59.999Z",
          ...attributed(keyA, "team-a"),
          ...checked(500),
          decision: "rejected",
          upstream_status: undefined,
          error: "INVESTIGATION_PROMPT_LIMIT",
        }),
        callRecord("use_3", undefined, {
          time: "2026-03-01T12:00:00.000Z",
          ...attributed(keyB, "team-a"),
          ...checked(2_000),
          usage: { input_tokens: 500 },
        }),
        callRecord("use_4", undefined, {
          time: "2026-03-02T00:00:00.000Z",
          ...attributed(keyA, "team-a"),
          decision: "failed",
          upstream_status: undefined,
          error: "MODEL_NOT_ALLOWED",
        }),
        callRecord("use_5", undefined, {
          time: "2026-03-02T08:00:00.000Z",
          ...attributed(keyC, null),
          ...checked(300),
          decision: "failed",
          upstream_status: 502,
          error: "upstream_5xx",
        }),
        callRecord("use_6", undefined, { time: "2026-03-02T09:00:00.000Z", ...checked(7_000) }),
        callRecord("use_7", undefined, {
          time: "2026-03-05T09:00:00.000Z",
          ...attributed(keyC, null),
          ...checked(100),
          decision: "failed",
          upstream_status: undefined,
          error: "RATE_LIMITED",
        }),
      ];
      const refsOf = (page: { calls: CallRecord[] } | undefined) => page?.calls.map((record) => record.ref);
      const march = { from: "2026-03-01T00:00:00.000Z", to: "2026-04-01T00:00:00.000Z" };

      beforeEach(async () => {
        for (const record of calls) await store.appendCall(record);
      });

      it("filters the listing by the key a call presented", async () => {
        const page = await store.listCalls({ order: "newest", limit: 10, key: keyA });
        expect(refsOf(page)).toEqual(["use_4", "use_2", "use_1"]);
        expect(page?.calls[2]).toEqual(calls[0]);
        expect(refsOf(await store.listCalls({ order: "newest", limit: 10, key: "key_unknown" }))).toEqual([]);
      });

      it("filters the listing by the team of the key, with the other filters and pages", async () => {
        const first = await store.listCalls({ order: "newest", limit: 2, team: "team-a" });
        expect(refsOf(first)).toEqual(["use_4", "use_3"]);
        expect(first?.more).toBe(true);
        const second = await store.listCalls({ order: "newest", limit: 2, team: "team-a", after: "use_3" });
        expect(refsOf(second)).toEqual(["use_2", "use_1"]);
        expect(second?.more).toBe(false);
        const rejected = await store.listCalls({ order: "newest", limit: 10, team: "team-a", decision: "rejected" });
        expect(refsOf(rejected)).toEqual(["use_2"]);
        const both = await store.listCalls({ order: "newest", limit: 10, team: "team-a", key: keyB });
        expect(refsOf(both)).toEqual(["use_3"]);
      });

      it("sums every key's calls per UTC day, by day then key", async () => {
        expect(await store.usage(march)).toEqual([
          { day: "2026-03-01", key_id: keyA, calls: 2, rejected: 1, chars: 1_000, tokens_in: 250, tokens_out: 40 },
          { day: "2026-03-01", key_id: keyB, calls: 1, rejected: 0, chars: 2_000, tokens_in: 500, tokens_out: 0 },
          { day: "2026-03-02", key_id: keyA, calls: 1, rejected: 1, chars: 0, tokens_in: 0, tokens_out: 0 },
          { day: "2026-03-02", key_id: keyC, calls: 1, rejected: 0, chars: 300, tokens_in: 0, tokens_out: 0 },
          { day: "2026-03-05", key_id: keyC, calls: 1, rejected: 1, chars: 0, tokens_in: 0, tokens_out: 0 },
        ]);
      });

      it("sums one key's or one team's calls, from `from` until before `to`", async () => {
        expect(await store.usage({ ...march, key: keyC })).toEqual([
          { day: "2026-03-02", key_id: keyC, calls: 1, rejected: 0, chars: 300, tokens_in: 0, tokens_out: 0 },
          { day: "2026-03-05", key_id: keyC, calls: 1, rejected: 1, chars: 0, tokens_in: 0, tokens_out: 0 },
        ]);
        const teamA = await store.usage({ ...march, team: "team-a" });
        expect(teamA.map((row) => [row.day, row.key_id])).toEqual([
          ["2026-03-01", keyA],
          ["2026-03-01", keyB],
          ["2026-03-02", keyA],
        ]);
        const range = { from: "2026-03-01T12:00:00.000Z", to: "2026-03-02T00:00:00.000Z" };
        expect(await store.usage(range)).toEqual([
          { day: "2026-03-01", key_id: keyA, calls: 1, rejected: 1, chars: 0, tokens_in: 0, tokens_out: 0 },
          { day: "2026-03-01", key_id: keyB, calls: 1, rejected: 0, chars: 2_000, tokens_in: 500, tokens_out: 0 },
        ]);
        expect(await store.usage({ ...march, team: "team-z" })).toEqual([]);
      });
    });

    describe("named keys", () => {
      const key1 = "key_000000000000000000000001";
      const key2 = "key_000000000000000000000002";
      const key3 = "key_000000000000000000000003";

      it("gets and lists no key when none was put", async () => {
        expect(await store.getKey(key1)).toBeUndefined();
        expect(await store.listKeys()).toEqual([]);
        expect(await store.keyOfSecret(sha("1"), 0)).toBeUndefined();
      });

      it("gets a put key and lists keys in the order they were made", async () => {
        const first = namedKey(key2, { createdAt: 3_000 });
        const second = namedKey(key1, { createdAt: 1_000 });
        const third = namedKey(key3, { createdAt: 2_000 });
        await store.putKey(first, sha("1"));
        await store.putKey(second, sha("2"));
        await store.putKey(third, sha("3"));
        expect(await store.getKey(key1)).toEqual(second);
        expect(await store.listKeys()).toEqual([first, second, third]);
      });

      it("keeps every setting exactly as given, undefined ones as undefined", async () => {
        const bare = namedKey(key1);
        const full = namedKey(key2, {
          name: "reporting batch",
          team: "analytics",
          policies: ["investigation.bounded", "default"],
          models: ["gpt-*", "gemini-2.?-pro"],
          credentials: { "openai.chat.completions": "OPENAI_KEY_ANALYTICS", gemini: "GEMINI_KEY_ANALYTICS" },
          limits: { requests_per_minute: 60, chars_per_day: 1_000_000, concurrent: 4 },
          createdAt: 1_700_000_000_000,
          expiresAt: 1_800_000_000_000,
        });
        const emptyTeam = namedKey(key3, { team: "", limits: {} });
        for (const [key, digit] of [
          [bare, "1"],
          [full, "2"],
          [emptyTeam, "3"],
        ] as const) {
          await store.putKey(key, sha(digit));
        }
        expect(await store.getKey(key1)).toEqual(bare);
        expect(await store.getKey(key2)).toEqual(full);
        expect(await store.getKey(key3)).toEqual(emptyTeam);
        const kept = await store.getKey(key1);
        for (const field of ["team", "limits", "expiresAt", "revokedAt", "lastUsedAt"] as const) {
          expect(kept).toHaveProperty(field, undefined);
        }
        expect(await store.listKeys()).toEqual([bare, full, emptyTeam]);
      });

      it("keeps a put key unchanged when the caller later mutates its object", async () => {
        const key = namedKey(key1, { policies: ["default"], credentials: { gemini: "GEMINI_KEY" } });
        await store.putKey(key, sha("1"));
        (key.policies as string[]).push("other");
        (key.credentials as Record<string, string>).gemini = "CHANGED";
        expect(await store.getKey(key1)).toMatchObject({
          policies: ["default"],
          credentials: { gemini: "GEMINI_KEY" },
        });
      });

      it("finds a key by its secret's hash, and none by a hash it does not know", async () => {
        const key = namedKey(key1);
        await store.putKey(key, sha("1"));
        expect(await store.keyOfSecret(sha("1"), 5_000)).toEqual(key);
        expect(await store.keyOfSecret(sha("2"), 5_000)).toBeUndefined();
      });

      it("finds a revoked or expired key by its secret, for the caller to refuse", async () => {
        await store.putKey(namedKey(key1, { expiresAt: 2_000 }), sha("1"));
        await store.putKey(namedKey(key2), sha("2"));
        await store.revokeKey(key2, 3_000);
        expect(await store.keyOfSecret(sha("1"), 5_000)).toMatchObject({ id: key1, expiresAt: 2_000 });
        expect(await store.keyOfSecret(sha("2"), 5_000)).toMatchObject({ id: key2, revokedAt: 3_000 });
      });

      it("replaces a key's settings, keeping its id, creation time, times of use and source", async () => {
        const key = namedKey(key1, {
          team: "analytics",
          policies: ["default"],
          limits: { requests_per_minute: 60 },
          expiresAt: 9_000,
        });
        await store.putKey(key, sha("1"));
        await store.touchKey(key1, 4_000);
        const settings: KeySettings = {
          name: "renamed",
          team: undefined,
          policies: [],
          models: ["claude-*"],
          credentials: { anthropic: "ANTHROPIC_KEY_B" },
          limits: undefined,
          expiresAt: undefined,
        };
        const expected: NamedKey = { ...key, ...settings, lastUsedAt: 4_000 };
        expect(await store.updateKey(key1, settings)).toEqual(expected);
        expect(await store.getKey(key1)).toEqual(expected);
        expect(await store.keyOfSecret(sha("1"), 5_000)).toEqual(expected);
      });

      it("updates no unknown key", async () => {
        const settings: KeySettings = {
          name: "x",
          team: undefined,
          policies: [],
          models: [],
          credentials: {},
          limits: undefined,
          expiresAt: undefined,
        };
        expect(await store.updateKey(key1, settings)).toBeUndefined();
        expect(await store.listKeys()).toEqual([]);
      });

      it("revokes a key once: a second revocation keeps the first time", async () => {
        await store.putKey(namedKey(key1), sha("1"));
        expect(await store.revokeKey(key1, 2_000)).toEqual(namedKey(key1, { revokedAt: 2_000 }));
        expect(await store.revokeKey(key1, 3_000)).toEqual(namedKey(key1, { revokedAt: 2_000 }));
        expect(await store.getKey(key1)).toMatchObject({ revokedAt: 2_000 });
        expect(await store.revokeKey(key2, 3_000)).toBeUndefined();
      });

      it("lets both secrets open a rotated key until the grace ends, then only the new one", async () => {
        const key = namedKey(key1);
        await store.putKey(key, sha("1"));
        await store.putKey(namedKey(key2), sha("9"));
        expect(await store.rotateKey(key1, sha("2"), 10_000)).toBe(true);
        expect(await store.keyOfSecret(sha("1"), 9_999)).toEqual(key);
        expect(await store.keyOfSecret(sha("2"), 9_999)).toEqual(key);
        expect(await store.keyOfSecret(sha("1"), 10_000)).toBeUndefined();
        expect(await store.keyOfSecret(sha("2"), 10_000)).toEqual(key);
        expect(await store.keyOfSecret(sha("2"), 1_000_000)).toEqual(key);
        // Another key's secret is left as it was.
        expect(await store.keyOfSecret(sha("9"), 1_000_000)).toMatchObject({ id: key2 });
      });

      it("keeps an earlier secret's shorter grace when a later rotation gives a longer one", async () => {
        await store.putKey(namedKey(key1), sha("1"));
        expect(await store.rotateKey(key1, sha("2"), 10_000)).toBe(true);
        expect(await store.rotateKey(key1, sha("3"), 20_000)).toBe(true);
        expect(await store.keyOfSecret(sha("1"), 9_999)).toMatchObject({ id: key1 });
        expect(await store.keyOfSecret(sha("1"), 10_000)).toBeUndefined();
        expect(await store.keyOfSecret(sha("2"), 19_999)).toMatchObject({ id: key1 });
        expect(await store.keyOfSecret(sha("2"), 20_000)).toBeUndefined();
        expect(await store.keyOfSecret(sha("3"), 20_000)).toMatchObject({ id: key1 });
      });

      it("shortens an earlier secret's grace when a later rotation gives a shorter one", async () => {
        await store.putKey(namedKey(key1), sha("1"));
        await store.rotateKey(key1, sha("2"), 20_000);
        await store.rotateKey(key1, sha("3"), 5_000);
        expect(await store.keyOfSecret(sha("1"), 5_000)).toBeUndefined();
        expect(await store.keyOfSecret(sha("2"), 5_000)).toBeUndefined();
        expect(await store.keyOfSecret(sha("3"), 5_000)).toMatchObject({ id: key1 });
      });

      it("leaves exactly one secret without an end when rotations of one key race", async () => {
        await store.putKey(namedKey(key1), sha("0"));
        const digits = ["1", "2", "3", "4", "5", "6"];
        // Reads side by side first, so that a store with a pool of connections has one open for each rotation.
        await Promise.all(digits.map(() => store.getKey(key1)));
        const rotated = await Promise.all(digits.map((digit) => store.rotateKey(key1, sha(digit), 10_000)));
        expect(rotated).toEqual(digits.map(() => true));
        const opening = [];
        for (const digit of ["0", ...digits]) {
          if ((await store.keyOfSecret(sha(digit), 10_000)) !== undefined) opening.push(digit);
        }
        expect(opening).toHaveLength(1);
      });

      it("rotates no unknown key", async () => {
        expect(await store.rotateKey(key1, sha("2"), 10_000)).toBe(false);
        expect(await store.keyOfSecret(sha("2"), 0)).toBeUndefined();
      });

      it("never moves a key's last use backwards", async () => {
        await store.putKey(namedKey(key1), sha("1"));
        await store.touchKey(key1, 5_000);
        expect(await store.getKey(key1)).toMatchObject({ lastUsedAt: 5_000 });
        await store.touchKey(key1, 4_000);
        expect(await store.getKey(key1)).toMatchObject({ lastUsedAt: 5_000 });
        await store.touchKey(key1, 6_000);
        expect(await store.getKey(key1)).toMatchObject({ lastUsedAt: 6_000 });
        await store.touchKey(key2, 7_000);
        expect(await store.getKey(key2)).toBeUndefined();
      });
    });
  });
}
