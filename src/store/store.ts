import type { KeySettings, NamedKey } from "../keys/named-key.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallDecision, CallRecord } from "../record/call-record.js";
import type { WindowEntry } from "../window/kept-quota.js";

/**
 * What the gateway remembers of a named prefix a provider keeps for later calls (a cached content), created through
 * the gateway: its size, never its text.
 */
export interface CachedPrefixRecord {
  /** The provider's name of it, as later calls name it. */
  name: string;
  /**
   * The keyed hash of the credential of the call that created it (see `principalOf`); empty for a record kept
   * before records had one, which is no one's.
   */
  principal: string;
  /** Code points of everything the prefix holds that a model reads (system text, messages, tools), measured at creation. */
  chars: number;
  /** Canonical-JSON SHA-256 of every JSON object embedded in the cached text, for schema de-duplication. */
  schemaHashes: string[];
  /** Expiry as epoch milliseconds; an expired record is never returned. */
  expiresAt: number;
}

/** The stored history size behind a Responses id: everything a follow-up turn carries implicitly. */
export interface ResponseHistoryRecord {
  id: string;
  /** Cumulative code points: prior history, this turn's input, and its output once known. */
  chars: number;
  /**
   * Whether `chars` includes the output. False for a background response until the gateway sees it
   * finished: until then a follow-up turn cannot be measured.
   */
  outputKnown: boolean;
  expiresAt: number;
  /** The session the response is a turn of: the id of its first response. Absent on records older than sessions. */
  session?: string;
  /** The response this one continued, if any. */
  previous?: string;
  /**
   * The provider's id of the response, where the client knows it by another (an answer job's): a continuation
   * names this one to the provider.
   */
  upstream?: string;
  /**
   * This turn's input items, then its output items, where the gateway holds the history because the provider holds
   * none (a model routed to another provider): a later turn is rebuilt from the chain of these.
   */
  items?: unknown[];
}

/** A follow-up session: who started it and the settings its first turn fixed. */
export interface SessionRecord {
  /** The id of its first response. */
  id: string;
  /** The keyed hash of the credential that started it; never the credential. */
  principal: string;
  /** The model the client named. */
  model: string;
  /** The reasoning level the first turn ran at, if any. */
  reasoning: string | undefined;
  /** The call label (`x-promptgate-call`) of the first turn, if any. */
  profile: string | undefined;
  /** The policy version (`name@sha256`) it runs under. */
  policy: string;
  /** The model table's entry for its model as it was, as canonical JSON: a change of it is a selection change. */
  selection: string;
  /** Whether the gateway holds its history (`ResponseHistoryRecord.items`) because the provider holds none. */
  held: boolean;
  /** Epoch milliseconds of its first turn, and of its latest. */
  startedAt: number;
  lastTurnAt: number;
}

/** An answer job's states: queued, in_progress, then exactly one of the terminal three. */
export type JobState = "queued" | "in_progress" | "cancelling" | "completed" | "failed" | "cancelled";

/** A job's failure as the client sees it: its class or code, the fixed message, and the ref of the call that failed. */
export interface JobError {
  code: string;
  message: string;
  ref: string;
}

/** An answer job (`background: true` run by the gateway): its state, its times and, once ended, its answer. */
export interface JobRecord {
  /** The response id the client polls (`resp_…`). */
  id: string;
  /** The keyed hash of the credential that created it. */
  principal: string;
  state: JobState;
  /** The policy version it runs under. */
  policy: string;
  /** Epoch milliseconds. */
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  /** When its runner last said it is alive; a job whose runner has been silent too long is orphaned. */
  heartbeatAt: number;
  /**
   * The response object: as created (queued), then as answered; null once a sweep dropped it from a job that expired
   * (`Store.sweep`), whose id, principal and times stay as its tombstone.
   */
  response: unknown;
  error?: JobError;
}

/** A result a controller keeps for recall by page, under its own id, per principal. */
export interface EvidenceRecord {
  principal: string;
  id: string;
  /** The result's compact JSON. */
  text: string;
  /** The code points of a page. */
  pageChars: number;
  createdAt: number;
  expiresAt: number;
}

/** A source index a controller registered (seeds 003, 004): the source ids a call's answer may cite. */
export interface SourceIndexRecord {
  principal: string;
  id: string;
  sources: string[];
  createdAt: number;
  expiresAt: number;
}

/** A case's state under one policy name: the version frozen for it and how many invalid answers it has had. */
export interface CaseFreeze {
  name: string;
  sha256: string;
  invalidAnswers: number;
}

/** The times before which `Store.sweep` deletes rows, as epoch milliseconds. */
export interface SweepCutoffs {
  now: number;
  /** Answer jobs that ended before this have expired: a sweep drops their answers and keeps the rest as tombstones. */
  jobsEndedBefore: number;
  /** The tombstones of jobs that ended before this are deleted. */
  jobTombstonesEndedBefore: number;
  /** Sessions without a turn since this are deleted (they expired long before; their rows hold no history). */
  sessionsIdleSince: number;
}

/** Which call records `listCalls` returns: every filter given applies, in one order, a page at a time. */
export interface CallQuery {
  /** `newest` first (the latest calls), or `oldest` first (a case read in order). */
  order: "newest" | "oldest";
  /** The most records a page holds. */
  limit: number;
  /** The ref of the last record of the previous page: this page continues after it, in `order`. */
  after?: string;
  case?: string;
  decision?: CallDecision;
  /** A policy name (calls under any of its versions) or one version's `name@` + 12 hex digits, as records hold it. */
  policy?: string;
  surface?: string;
  /** The error code the client received. */
  error?: string;
  /** The id of the named key the call presented. */
  key?: string;
  /** The team of the named key the call presented, as the record holds it. */
  team?: string;
}

/**
 * Which calls `usage` sums: those that arrived from `from` (inclusive) until `to` (exclusive), both ISO 8601 times
 * in UTC as `Date.toISOString` writes them, of one named key, of one team's keys, or of every named key.
 */
export interface UsageQuery {
  from: string;
  to: string;
  key?: string;
  team?: string;
}

/** What the calls of one named key came to on one UTC day (contract section 9). */
export interface UsageRow {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  key_id: string;
  /** Every call of the key that day. */
  calls: number;
  /** Those refused: by a check (decision `rejected`), by the key's bindings or by a limit. */
  rejected: number;
  /** The provider check's `conservative_total_chars` of the calls that were sent. */
  chars: number;
  /** The tokens the provider reported. */
  tokens_in: number;
  tokens_out: number;
}

/** A page of call records. */
export interface CallPage {
  calls: CallRecord[];
  /** Whether more records match after the page's last one. */
  more: boolean;
}

/** Policy versions, as every gateway sharing the store knows them. */
export interface PolicyVersionStore {
  /** Persists a policy version; storing a known version again changes nothing. */
  savePolicyVersion(version: PolicyVersion): Promise<void>;
  /** Every persisted policy version, oldest first. */
  listPolicyVersions(): Promise<PolicyVersion[]>;
}

/** The policy versions cases froze, and their invalid answers. */
export interface CaseFreezeStore {
  /**
   * Freezes `sha256` as the version of policy `name` for a case unless one is frozen already,
   * atomically; returns the freeze (the existing one, or the one just stored) with the case's invalid answers.
   */
  freezeCasePolicy(caseId: string, name: string, sha256: string): Promise<CaseFreeze>;
  /** Counts one invalid answer of a case under a policy name it froze; a pair never frozen is ignored. */
  addInvalidAnswer(caseId: string, name: string): Promise<void>;
  /** Every policy name a case froze, by name, with its counts. */
  listCaseFreezes(caseId: string): Promise<CaseFreeze[]>;
  /** Sets a case's invalid answers back to 0 under every policy name (the admin's reset of the cap). */
  resetInvalidAnswers(caseId: string): Promise<void>;
}

/** The named prefixes (cached contents) created through the gateway. */
export interface CachedPrefixStore {
  putCachedPrefix(record: CachedPrefixRecord): Promise<void>;
  /** The record, or undefined when unknown or expired at `now` (epoch ms). */
  getCachedPrefix(name: string, now: number): Promise<CachedPrefixRecord | undefined>;
  /** Changes the expiry of a known record; unknown names are ignored. */
  updateCachedPrefixExpiry(name: string, expiresAt: number): Promise<void>;
  deleteCachedPrefix(name: string): Promise<void>;
}

/** The stored responses' histories: what a follow-up turn carries implicitly. */
export interface ResponseHistoryStore {
  putResponseHistory(record: ResponseHistoryRecord): Promise<void>;
  /** The record, or undefined when unknown or expired at `now` (epoch ms). */
  getResponseHistory(id: string, now: number): Promise<ResponseHistoryRecord | undefined>;
  /**
   * Adds `outputChars` to a record whose output is unknown and marks it known, atomically, so that
   * the output is counted once however often the finished response is seen; any other id is ignored.
   */
  completeResponseHistory(id: string, outputChars: number): Promise<void>;
  deleteResponseHistory(id: string): Promise<void>;
}

/** Follow-up sessions and their turns. */
export interface SessionStore {
  /**
   * Keeps a session as its first turn made it, atomically; a known id changes nothing. Returns whether the session
   * under that id is the principal's (false when another principal's session holds the id).
   */
  putSession(record: SessionRecord): Promise<boolean>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  /** Notes a turn at `at` (epoch ms); a later turn already noted stays. */
  touchSession(id: string, at: number): Promise<void>;
  /**
   * Takes the session's turn for `holder` until `until` (epoch ms), atomically, unless another holder has it and
   * its hold has not run out at `now`; returns whether `holder` has it. One turn of a session runs at a time.
   */
  claimSessionTurn(id: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Gives the turn back, if `holder` still has it. */
  releaseSessionTurn(id: string, holder: string): Promise<void>;
}

/** Answer jobs. */
export interface JobStore {
  putJob(record: JobRecord): Promise<void>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /**
   * Moves a job to `update.state` (with the fields given), atomically, only from one of the states `from`; returns
   * the job as it is afterwards (changed or not), or undefined when unknown. So a cancel and an end cannot both win.
   */
  updateJob(
    id: string,
    from: readonly JobState[],
    update: Partial<Omit<JobRecord, "id" | "principal" | "policy" | "createdAt">> & { state: JobState },
  ): Promise<JobRecord | undefined>;
  /** Notes that a job's runner is alive at `at`. */
  beatJob(id: string, at: number): Promise<void>;
}

/** What the window toolkit keeps per principal: results for recall (evidence) and source indexes. */
export interface KeptStore {
  /** Keeps a result for recall; one of the same principal and id is replaced. */
  putEvidence(record: EvidenceRecord): Promise<void>;
  /** The principal's result of that id, or undefined when unknown or expired at `now`. */
  getEvidence(principal: string, id: string, now: number): Promise<EvidenceRecord | undefined>;
  /** How many unexpired results a principal keeps at `now`, and their code points, leaving out the one of id `except`. */
  evidenceUsage(principal: string, now: number, except: string): Promise<{ count: number; chars: number }>;
  /** Forgets a principal's result of that id; an unknown one is ignored. */
  deleteEvidence(principal: string, id: string): Promise<void>;
  /** Keeps a source index; one of the same principal and id is replaced. */
  putSourceIndex(record: SourceIndexRecord): Promise<void>;
  /** The principal's source index of that id, or undefined when unknown or expired at `now`. */
  getSourceIndex(principal: string, id: string, now: number): Promise<SourceIndexRecord | undefined>;
  /** Forgets a principal's source index of that id; an unknown one is ignored. */
  deleteSourceIndex(principal: string, id: string): Promise<void>;
  /**
   * How many unexpired source indexes a principal keeps at `now`, and the code points of their ids as kept (each a
   * JSON array), leaving out the one of id `except`.
   */
  sourceIndexUsage(principal: string, now: number, except: string): Promise<{ count: number; chars: number }>;
  /**
   * How many unexpired results and source indexes all principals together keep at `now`, and their code points,
   * leaving out the one `except` names (the one a put replaces): what pass-through callers share.
   */
  windowUsage(now: number, except: WindowEntry): Promise<{ count: number; chars: number }>;
}

/**
 * Named keys made through the admin API or the CLI, each with the SHA-256 (lowercase hex) of every secret that opens
 * it; never a secret itself. Keys of `keys.toml` are not kept here.
 */
export interface KeyStore {
  /** Keeps a new key (its `source` is `api`) with the SHA-256 of its secret. */
  putKey(key: NamedKey, secretSha256: string): Promise<void>;
  getKey(id: string): Promise<NamedKey | undefined>;
  /** Every key, revoked and expired ones included, in the order they were made. */
  listKeys(): Promise<NamedKey[]>;
  /**
   * The key a secret's SHA-256 opens at `now` (epoch ms): its current secret, or an earlier one within the grace a
   * rotation gave it; undefined for any other. Revoked and expired keys are returned too: the caller tells them apart.
   */
  keyOfSecret(secretSha256: string, now: number): Promise<NamedKey | undefined>;
  /** Replaces a key's settings; returns the key as it is afterwards, undefined when unknown. */
  updateKey(id: string, settings: KeySettings): Promise<NamedKey | undefined>;
  /** Revokes a key at `at` unless it is revoked already (the first time stays); returns it, undefined when unknown. */
  revokeKey(id: string, at: number): Promise<NamedKey | undefined>;
  /**
   * Adds a secret to a key, atomically letting every earlier one open it only until `graceUntil` (epoch ms; an earlier
   * one's shorter grace stays); returns false when the key is unknown.
   */
  rotateKey(id: string, secretSha256: string, graceUntil: number): Promise<boolean>;
  /** Notes that a call presented the key at `at`; an earlier time never replaces a later one. */
  touchKey(id: string, at: number): Promise<void>;
}

/** One counter of a limit over time: a scope's (a principal under a policy, or a key), one limit's, one window's. */
export interface CounterKey {
  /** Whose counter: e.g. `policy:<name>:<principal>` or `key:<id>`; opaque to the store. */
  scope: string;
  /** The limit's name, e.g. `requests_per_minute`. */
  name: string;
  /** The window: its index in time (e.g. the UTC minute since the epoch); opaque to the store. */
  bucket: number;
}

/** A charge to a counter, admitted only while the counter stays within `cap`. */
export interface CounterCharge extends CounterKey {
  /** What the charge adds (0 or more). */
  amount: number;
  /** The most the counter may hold after the charge. */
  cap: number;
  /** Epoch ms after which no limit reads the counter again (the sweep may delete it). */
  expires: number;
}

/** A change to a counter without a cap: a reconciliation or a release. */
export interface CounterChange extends CounterKey {
  /** What the change adds; negative gives back. */
  amount: number;
  expires: number;
}

/** The counters of one scope and limit whose buckets lie in `from`..`to` (both included). */
export interface CounterRange {
  scope: string;
  name: string;
  from: number;
  to: number;
}

/** A counter's value. */
export interface CounterValue extends CounterKey {
  used: number;
}

/**
 * The counters of limits over time (requests, characters, tokens, calls in flight per window). Shared by every
 * process and node on the store: a charge is atomic across them, so that a window is never exceeded.
 */
export interface LimitStore {
  /**
   * All or none: adds every charge's amount (0 or more) to its counter (a new counter starts at 0) when each counter
   * then holds no more than its charge's cap, and returns every charged counter's value after the charge, in the
   * charges' order; otherwise changes nothing and returns undefined. Atomic across every process and node sharing the
   * store. No charges: an empty list.
   */
  chargeCounters(charges: readonly CounterCharge[]): Promise<CounterValue[] | undefined>;
  /** Adds each change's amount, whatever the cap; a counter never goes below 0. */
  changeCounters(changes: readonly CounterChange[]): Promise<void>;
  /** The counters in the ranges, each once, by scope, name and bucket; a counter never charged is left out. */
  readCounters(ranges: readonly CounterRange[]): Promise<CounterValue[]>;
}

/** The store's own secrets. */
export interface SecretStore {
  /**
   * A random secret of the store's, made on first use and the same for every process sharing the store from then on
   * (the key of principal hashes).
   */
  secret(name: string): Promise<string>;
}

/** Call records, append-only. */
export interface CallStore {
  /** Appends a call record; records are never changed afterwards. */
  appendCall(record: CallRecord): Promise<void>;
  getCall(ref: string): Promise<CallRecord | undefined>;
  /** The records of one case, oldest first, at most `limit`. */
  listCallsOfCase(caseId: string, limit: number): Promise<CallRecord[]>;
  /** A page of the records `query` selects; undefined when `query.after` is no ref the store holds. */
  listCalls(query: CallQuery): Promise<CallPage | undefined>;
  /** The usage of named keys `query` selects, one row per key and UTC day, by day then key id. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
}

/** The store as a whole: its upkeep, its reachability and its end. */
export interface StoreUpkeep {
  /**
   * Deletes the rows nobody will read again: cached prefixes, response histories, evidence, source indexes and limit
   * counters expired at `cutoffs.now`, the tombstones of answer jobs that ended before `cutoffs.jobTombstonesEndedBefore`, and
   * sessions without a turn since `cutoffs.sessionsIdleSince` whose turn is free; drops the answer (`response`,
   * `error`) of a job that ended before `cutoffs.jobsEndedBefore`, keeping its tombstone, so that a poll is still told
   * it expired. Safe on many processes at once (a PostgreSQL store lets one node at a time do it).
   */
  sweep(cutoffs: SweepCutoffs): Promise<void>;

  /**
   * Whether a store on a server (PostgreSQL) can be reached now; `/readyz` is 503 while it cannot. Absent where the
   * store is in the process (memory, SQLite) or a binding (D1).
   */
  reachable?(): Promise<boolean>;

  close(): Promise<void>;
}

/**
 * The gateway's durable state, one part per kind of record it keeps. Small and asynchronous, so that SQLite on Node
 * and Workers bindings on the edge can both implement it. Every method is safe under concurrent calls.
 */
export type Store = PolicyVersionStore &
  CaseFreezeStore &
  CachedPrefixStore &
  ResponseHistoryStore &
  SessionStore &
  JobStore &
  KeptStore &
  SecretStore &
  KeyStore &
  LimitStore &
  CallStore &
  StoreUpkeep;
