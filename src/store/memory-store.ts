import { LRUCache } from "lru-cache";
import type { NamedKey } from "../keys/named-key.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import type { WindowEntry } from "../window/kept-quota.js";
import { type CallUsage, callUsageOf, usageOfRecords } from "./call-usage.js";
import { KeptTexts, keptText } from "./kept-texts.js";
import { compareKeys, mergedChanges, mergedCharges, orderedCounters } from "./limit-counters-sql.js";
import { randomSecret } from "./random-secret.js";
import type {
  CachedPrefixRecord,
  CallQuery,
  CaseFreeze,
  CounterKey,
  CounterRange,
  CounterValue,
  EvidenceRecord,
  JobRecord,
  ResponseHistoryRecord,
  SessionRecord,
  SourceIndexRecord,
  Store,
} from "./store.js";

/** Bounds of the in-memory store; the oldest entries go first once a bound is passed. */
export interface MemoryStoreOptions {
  /** Call records kept. */
  maxCalls?: number;
  /** Cached-prefix records kept, and separately response-history records kept. */
  maxEntries?: number;
}

/**
 * A bounded map: `set` makes an entry the newest and drops the oldest past the bound, in
 * constant time (a plain Map's oldest entry gets slower to reach the more have been deleted
 * before it). Reads use `peek`, so reading never reorders.
 */
function boundedMap<V extends object>(max: number): LRUCache<string, V> {
  return new LRUCache<string, V>({ max });
}

/** The entry unless it has expired at `now`; an expired one is deleted on the way. */
function unexpired<V extends { expiresAt: number }>(
  entries: LRUCache<string, V>,
  key: string,
  now: number,
): V | undefined {
  const entry = entries.peek(key);
  if (entry === undefined || entry.expiresAt > now) return entry;
  entries.delete(key);
  return undefined;
}

/** Deletes every entry expired at `now`. */
function sweepExpired<V extends { expiresAt: number }>(entries: LRUCache<string, V>, now: number): void {
  const expired = [...entries.entries()].filter(([, entry]) => entry.expiresAt <= now).map(([key]) => key);
  for (const key of expired) entries.delete(key);
}

/**
 * A call record as kept: its JSON text as UTF-8 (see `KeptTexts`), its place in the order of writing, and the
 * fields a listing filters by.
 */
interface StoredCall extends Pick<CallRecord, "time" | "case" | "decision" | "policy" | "surface" | "error"> {
  seq: number;
  /** What the call adds to its named key's usage, its key's id and team among it. */
  usage: CallUsage;
  json: Uint8Array;
}

/** Whether a stored call passes every filter of `query` (its order, cursor and limit aside). */
function matches(query: CallQuery, stored: StoredCall): boolean {
  const policyMatches =
    query.policy === undefined ||
    (query.policy.includes("@")
      ? stored.policy === query.policy
      : stored.policy?.startsWith(`${query.policy}@`) === true);
  return (
    policyMatches &&
    (query.case === undefined || stored.case === query.case) &&
    (query.decision === undefined || stored.decision === query.decision) &&
    (query.surface === undefined || stored.surface === query.surface) &&
    (query.error === undefined || stored.error === query.error) &&
    (query.key === undefined || stored.usage.keyId === query.key) &&
    (query.team === undefined || stored.usage.team === query.team)
  );
}

/**
 * A Store held in memory, for `PROMPTGATE_DB=memory` and tests. Call records and cache/history entries are
 * bounded; policy versions and case freezes are small and kept. Values are copied in and out, so that callers
 * see the same never-changing records a persistent store gives them.
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  const maxCalls = options.maxCalls ?? 10_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const policyVersions = new Map<string, PolicyVersion>();
  // Keyed by [caseId, name] as JSON, so that no separator character can make two pairs collide.
  const casePolicies = new Map<string, CaseFreeze>();
  const cachedPrefixes = boundedMap<CachedPrefixRecord>(maxEntries);
  const responseHistories = boundedMap<ResponseHistoryRecord>(maxEntries);
  const sessions = boundedMap<SessionRecord>(maxEntries);
  const turns = new Map<string, { holder: string; until: number }>();
  const secrets = new Map<string, string>();
  // Keys are few and kept for good, in the order they were made; their secrets by SHA-256, each with the end of its
  // grace (undefined: none).
  const namedKeys = new Map<string, NamedKey>();
  const keySecrets = new Map<string, { keyId: string; validUntil: number | undefined }>();
  const jobs = boundedMap<JobRecord>(maxEntries);
  // Keyed by [principal, id] as JSON, so that no separator character can make two pairs collide.
  const evidence = boundedMap<EvidenceRecord>(maxEntries);
  const sourceIndexes = boundedMap<SourceIndexRecord>(maxEntries);
  // A call record is kept as its JSON text, as the SQL store keeps it (cheaper to copy in than a clone), with the
  // fields it is listed by.
  const calls = boundedMap<StoredCall>(maxCalls);
  const callTexts = new KeptTexts();
  // The counters of limits, by scope, name and bucket: a read of a range looks at one limit's counters only.
  // Not bounded as the rest (a counter dropped early would let a limit be exceeded): the sweep deletes expired ones.
  const counters = new Map<string, Map<string, Map<number, { used: number; expires: number }>>>();
  const bucketsOf = (key: Pick<CounterKey, "scope" | "name">) => counters.get(key.scope)?.get(key.name);
  const counterOf = (key: CounterKey) => bucketsOf(key)?.get(key.bucket);
  const setCounter = (key: CounterKey, used: number, expires: number) => {
    let names = counters.get(key.scope);
    if (names === undefined) {
      names = new Map();
      counters.set(key.scope, names);
    }
    let buckets = names.get(key.name);
    if (buckets === undefined) {
      buckets = new Map();
      names.set(key.name, buckets);
    }
    const kept = buckets.get(key.bucket);
    if (kept === undefined) buckets.set(key.bucket, { used, expires });
    else {
      kept.used = used;
      kept.expires = Math.max(expires, kept.expires);
    }
  };
  const callOf = (stored: StoredCall) => JSON.parse(keptText(stored.json)) as CallRecord;
  let callsWritten = 0;

  return {
    async savePolicyVersion(version) {
      if (!policyVersions.has(version.sha256)) policyVersions.set(version.sha256, structuredClone(version));
    },
    async listPolicyVersions() {
      return [...policyVersions.values()].map((version) => structuredClone(version));
    },
    async freezeCasePolicy(caseId, name, sha256) {
      const key = JSON.stringify([caseId, name]);
      const frozen = casePolicies.get(key) ?? { name, sha256, invalidAnswers: 0 };
      casePolicies.set(key, frozen);
      return { ...frozen };
    },
    async addInvalidAnswer(caseId, name) {
      const frozen = casePolicies.get(JSON.stringify([caseId, name]));
      if (frozen !== undefined) frozen.invalidAnswers += 1;
    },
    async listCaseFreezes(caseId) {
      return [...casePolicies.entries()]
        .filter(([key]) => JSON.parse(key)[0] === caseId)
        .map(([, frozen]) => ({ ...frozen }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async resetInvalidAnswers(caseId) {
      for (const [key, frozen] of casePolicies) if (JSON.parse(key)[0] === caseId) frozen.invalidAnswers = 0;
    },

    async putCachedPrefix(record) {
      cachedPrefixes.set(record.name, { ...record, schemaHashes: [...record.schemaHashes] });
    },
    async getCachedPrefix(name, now) {
      const record = unexpired(cachedPrefixes, name, now);
      return record === undefined ? undefined : { ...record, schemaHashes: [...record.schemaHashes] };
    },
    async updateCachedPrefixExpiry(name, expiresAt) {
      const record = cachedPrefixes.peek(name);
      if (record !== undefined) cachedPrefixes.set(name, { ...record, expiresAt });
    },
    async deleteCachedPrefix(name) {
      cachedPrefixes.delete(name);
    },

    async putResponseHistory(record) {
      responseHistories.set(record.id, structuredClone(record));
    },
    async getResponseHistory(id, now) {
      const record = unexpired(responseHistories, id, now);
      return record === undefined ? undefined : structuredClone(record);
    },
    async completeResponseHistory(id, outputChars) {
      const record = responseHistories.peek(id);
      if (record === undefined || record.outputKnown) return;
      responseHistories.set(id, { ...record, chars: record.chars + outputChars, outputKnown: true });
    },
    async deleteResponseHistory(id) {
      responseHistories.delete(id);
    },

    async putSession(record) {
      const known = sessions.peek(record.id);
      if (known === undefined) sessions.set(record.id, { ...record });
      return (known ?? record).principal === record.principal;
    },
    async getSession(id) {
      const record = sessions.peek(id);
      return record === undefined ? undefined : { ...record };
    },
    async touchSession(id, at) {
      const record = sessions.peek(id);
      if (record !== undefined && record.lastTurnAt < at) sessions.set(id, { ...record, lastTurnAt: at });
    },
    async claimSessionTurn(id, holder, until, now) {
      const turn = turns.get(id);
      if (turn !== undefined && turn.holder !== holder && turn.until > now) return false;
      turns.set(id, { holder, until });
      return true;
    },
    async releaseSessionTurn(id, holder) {
      if (turns.get(id)?.holder === holder) turns.delete(id);
    },
    async putJob(record) {
      jobs.set(record.id, structuredClone(record));
    },
    async getJob(id) {
      const record = jobs.peek(id);
      return record === undefined ? undefined : structuredClone(record);
    },
    async updateJob(id, from, update) {
      const record = jobs.peek(id);
      if (record === undefined) return undefined;
      if (!from.includes(record.state)) return structuredClone(record);
      const updated = { ...record, ...structuredClone(update) };
      jobs.set(id, updated);
      return structuredClone(updated);
    },
    async beatJob(id, at) {
      const record = jobs.peek(id);
      if (record !== undefined && record.heartbeatAt < at) jobs.set(id, { ...record, heartbeatAt: at });
    },

    async putEvidence(record) {
      evidence.set(JSON.stringify([record.principal, record.id]), { ...record });
    },
    async getEvidence(principal, id, now) {
      const record = unexpired(evidence, JSON.stringify([principal, id]), now);
      return record === undefined ? undefined : { ...record };
    },

    async evidenceUsage(principal, now, except) {
      let count = 0;
      let chars = 0;
      for (const record of evidence.values()) {
        if (record.principal !== principal || record.id === except || record.expiresAt <= now) continue;
        count += 1;
        chars += lengthOf(record.text);
      }
      return { count, chars };
    },
    async deleteEvidence(principal, id) {
      evidence.delete(JSON.stringify([principal, id]));
    },

    async putSourceIndex(record) {
      sourceIndexes.set(JSON.stringify([record.principal, record.id]), structuredClone(record));
    },
    async getSourceIndex(principal, id, now) {
      const record = unexpired(sourceIndexes, JSON.stringify([principal, id]), now);
      return record === undefined ? undefined : structuredClone(record);
    },
    async deleteSourceIndex(principal, id) {
      sourceIndexes.delete(JSON.stringify([principal, id]));
    },
    async sourceIndexUsage(principal, now, except) {
      let count = 0;
      let chars = 0;
      for (const record of sourceIndexes.values()) {
        if (record.principal !== principal || record.id === except || record.expiresAt <= now) continue;
        count += 1;
        chars += lengthOf(JSON.stringify(record.sources));
      }
      return { count, chars };
    },
    async windowUsage(now, except) {
      const usage = { count: 0, chars: 0 };
      const add = (kind: WindowEntry["kind"], record: EvidenceRecord | SourceIndexRecord, text: () => string) => {
        if (record.expiresAt <= now) return;
        if (kind === except.kind && record.principal === except.principal && record.id === except.id) return;
        usage.count += 1;
        usage.chars += lengthOf(text());
      };
      for (const record of evidence.values()) add("evidence", record, () => record.text);
      for (const record of sourceIndexes.values()) add("source_index", record, () => JSON.stringify(record.sources));
      return usage;
    },

    async sweep({ now, jobsEndedBefore, jobTombstonesEndedBefore, sessionsIdleSince }) {
      sweepExpired(cachedPrefixes, now);
      sweepExpired(responseHistories, now);
      sweepExpired(evidence, now);
      sweepExpired(sourceIndexes, now);
      for (const [scope, names] of counters) {
        for (const [name, buckets] of names) {
          for (const [bucket, counter] of buckets) if (counter.expires <= now) buckets.delete(bucket);
          if (buckets.size === 0) names.delete(name);
        }
        if (names.size === 0) counters.delete(scope);
      }
      for (const [id, job] of [...jobs.entries()]) {
        if (job.endedAt === undefined || job.endedAt >= jobsEndedBefore) continue;
        if (job.endedAt < jobTombstonesEndedBefore) {
          jobs.delete(id);
        } else {
          // The store's own copy, changed in place so that the job keeps its place among the newest.
          job.response = null;
          delete job.error;
        }
      }
      for (const [id, session] of [...sessions.entries()]) {
        const turn = turns.get(id);
        if (session.lastTurnAt < sessionsIdleSince && (turn === undefined || turn.until <= now)) {
          sessions.delete(id);
          turns.delete(id);
        }
      }
    },

    async secret(name) {
      const known = secrets.get(name);
      if (known !== undefined) return known;
      const made = randomSecret();
      secrets.set(name, made);
      return made;
    },

    async putKey(key, secretSha256) {
      if (namedKeys.has(key.id)) throw new Error(`A key of id ${key.id} is kept already.`);
      if (keySecrets.has(secretSha256)) throw new Error("A key secret of that SHA-256 is kept already.");
      namedKeys.set(key.id, { ...structuredClone(key), source: "api" });
      keySecrets.set(secretSha256, { keyId: key.id, validUntil: undefined });
    },
    async getKey(id) {
      const key = namedKeys.get(id);
      return key === undefined ? undefined : structuredClone(key);
    },
    async listKeys() {
      return [...namedKeys.values()].map((key) => structuredClone(key));
    },
    async keyOfSecret(secretSha256, now) {
      const secret = keySecrets.get(secretSha256);
      if (secret === undefined || (secret.validUntil !== undefined && secret.validUntil <= now)) return undefined;
      const key = namedKeys.get(secret.keyId);
      return key === undefined ? undefined : structuredClone(key);
    },
    async updateKey(id, settings) {
      const key = namedKeys.get(id);
      if (key === undefined) return undefined;
      const { name, team, policies, models, credentials, limits, expiresAt } = structuredClone(settings);
      const updated: NamedKey = { ...key, name, team, policies, models, credentials, limits, expiresAt };
      namedKeys.set(id, updated);
      return structuredClone(updated);
    },
    async revokeKey(id, at) {
      const key = namedKeys.get(id);
      if (key === undefined) return undefined;
      if (key.revokedAt === undefined) key.revokedAt = at;
      return structuredClone(key);
    },
    async rotateKey(id, secretSha256, graceUntil) {
      if (!namedKeys.has(id)) return false;
      if (keySecrets.has(secretSha256)) throw new Error("A key secret of that SHA-256 is kept already.");
      for (const secret of keySecrets.values()) {
        if (secret.keyId === id && (secret.validUntil === undefined || secret.validUntil > graceUntil)) {
          secret.validUntil = graceUntil;
        }
      }
      keySecrets.set(secretSha256, { keyId: id, validUntil: undefined });
      return true;
    },
    async touchKey(id, at) {
      const key = namedKeys.get(id);
      if (key !== undefined && (key.lastUsedAt === undefined || key.lastUsedAt < at)) key.lastUsedAt = at;
    },

    async chargeCounters(charges) {
      // Duplicates summed under the smallest of their caps, as the SQL stores do (see `mergedCharges`); a call's
      // charges name each counter once, and are taken as they are.
      const merged = hasDuplicateCounter(charges) ? mergedCharges(charges) : charges;
      for (const charge of merged) if ((counterOf(charge)?.used ?? 0) + charge.amount > charge.cap) return undefined;
      for (const charge of merged) {
        setCounter(charge, (counterOf(charge)?.used ?? 0) + charge.amount, charge.expires);
      }
      return charges.map(({ scope, name, bucket }) => ({
        scope,
        name,
        bucket,
        used: counterOf({ scope, name, bucket })?.used ?? 0,
      }));
    },
    async changeCounters(changes) {
      for (const change of hasDuplicateCounter(changes) ? mergedChanges(changes) : changes) {
        const kept = counterOf(change);
        // What gives back never makes a counter that was never charged, as an UPDATE of no row does not.
        if (kept === undefined && change.amount <= 0) continue;
        setCounter(change, Math.max(0, (kept?.used ?? 0) + change.amount), change.expires);
      }
    },
    async readCounters(ranges) {
      const found: CounterValue[] = [];
      for (const range of ranges) {
        for (const [bucket, counter] of bucketsOf(range) ?? []) {
          if (bucket >= range.from && bucket <= range.to) {
            found.push({ scope: range.scope, name: range.name, bucket, used: counter.used });
          }
        }
      }
      // Ranges that overlap would find a counter twice: once each, then.
      return rangesOverlap(ranges) ? orderedCounters(found) : found.sort(compareKeys);
    },

    async appendCall(record) {
      if (calls.has(record.ref)) return;
      const { time, case: caseId, decision, policy, surface, error } = record;
      callsWritten += 1;
      calls.set(record.ref, {
        seq: callsWritten,
        time,
        usage: callUsageOf(record),
        case: caseId,
        decision,
        policy,
        surface,
        error,
        json: callTexts.keep(JSON.stringify(record)),
      });
    },
    async getCall(ref) {
      const stored = calls.peek(ref);
      return stored === undefined ? undefined : callOf(stored);
    },
    async listCallsOfCase(caseId, limit) {
      const count = Math.max(0, Math.trunc(limit));
      const found: CallRecord[] = [];
      for (const stored of calls.rvalues()) {
        if (found.length >= count) break;
        if (stored !== undefined && stored.case === caseId) found.push(callOf(stored));
      }
      return found;
    },
    async listCalls(query) {
      const after = query.after === undefined ? undefined : calls.peek(query.after)?.seq;
      if (query.after !== undefined && after === undefined) return undefined;
      const newest = query.order === "newest";
      const limit = Math.max(0, Math.trunc(query.limit));
      const found: CallRecord[] = [];
      // Writing order is the cache's order, as reads only peek: values() runs newest first, rvalues() oldest first.
      for (const stored of newest ? calls.values() : calls.rvalues()) {
        if (stored === undefined) continue;
        if (after !== undefined && (newest ? stored.seq >= after : stored.seq <= after)) continue;
        if (!matches(query, stored)) continue;
        if (found.length === limit) return { calls: found, more: true };
        found.push(callOf(stored));
      }
      return { calls: found, more: false };
    },
    async usage(query) {
      const kept = [...calls.rvalues()].filter((stored): stored is StoredCall => stored !== undefined);
      return usageOfRecords(kept, query);
    },

    async close() {},
  };
}

/** A text's length as SQL's LENGTH counts it: in code points. */
function lengthOf(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

/** Whether two of `keys` name the same counter (a call's few charges, compared pairwise). */
function hasDuplicateCounter(keys: readonly CounterKey[]): boolean {
  for (let one = 0; one < keys.length; one++) {
    const a = keys[one] as CounterKey;
    for (let other = one + 1; other < keys.length; other++) {
      const b = keys[other] as CounterKey;
      if (a.bucket === b.bucket && a.name === b.name && a.scope === b.scope) return true;
    }
  }
  return false;
}

/** Whether two of `ranges` name some counter both (a call's few ranges, compared pairwise). */
function rangesOverlap(ranges: readonly CounterRange[]): boolean {
  for (let one = 0; one < ranges.length; one++) {
    const a = ranges[one] as CounterRange;
    for (let other = one + 1; other < ranges.length; other++) {
      const b = ranges[other] as CounterRange;
      if (a.name === b.name && a.scope === b.scope && a.from <= b.to && b.from <= a.to) return true;
    }
  }
  return false;
}
