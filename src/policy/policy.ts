/**
 * A policy as its TOML file holds it, after validation against schemas/policy.schema.json.
 * Keys keep the file's snake_case so that the file, the schema and this type read alike.
 */
export interface Policy {
  name: string;
  description?: string;
  window: {
    /** true: both checks reject an oversize call; false: measure and report only. */
    enforce: boolean;
    target_chars: number;
    limit_chars: number;
    reserve_chars: number;
    /**
     * Fields the surface does not know at all: counted as other (`count`, the default when unset)
     * or refused with INVALID_REQUEST naming the path (`reject`). Unset keeps older versions' identity.
     */
    unknown_fields?: "count" | "reject";
    /** The most binary media parts (images, audio, video, PDF) a call may carry; unset: no cap. */
    max_media_parts?: number;
  };
  validation: {
    enabled: boolean;
    on_invalid: "error" | "annotate";
    /**
     * The most code points a client's response schema may have as compact JSON. Unset keeps older
     * versions' identity; `maxSchemaCharsOf` applies the default then.
     */
    max_schema_chars?: number;
    /**
     * The named schemas (`PROMPTGATE_SCHEMAS`) a call's response schema must be one of, compared by content; a call
     * with another schema is INVALID_REQUEST. Unset: any schema.
     */
    schemas?: string[];
    /** The most invalid answers a case may have under this policy name before its calls get INVALID_ANSWER_LIMIT. */
    max_invalid_per_case?: number;
  };
  repair: RepairRule[];
  cache: {
    /** What a cached prefix or previous response the gateway cannot measure gets. */
    unknown_prefix: "reject" | "estimate";
    /** Characters assumed per provider token when estimating; chosen high to stay conservative. */
    chars_per_token: number;
  };
  upstream_errors: {
    text: "redacted" | "passthrough";
  };
  /**
   * The provider call. Optional and without a default object, so that policies that do not set it
   * keep their identity (and versions stored before it existed still read).
   */
  upstream?: {
    /** Seconds a provider call may take, its streamed answer included, before it ends in `timeout`. */
    deadline_seconds: number;
    /** Overrides `PROMPTGATE_UPSTREAM_CONNECT_SECONDS`: seconds until the connection is open. */
    connect_seconds?: number;
    /** Overrides `PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS`: seconds a streamed call waits for its answer's head. */
    first_byte_seconds?: number;
    /** Overrides `PROMPTGATE_UPSTREAM_IDLE_SECONDS`: seconds a stream may go without bytes. */
    idle_seconds?: number;
  };
  /** OpenAI calls translated for another provider. Optional, without a default object, to keep older identities. */
  translation?: {
    /** Chat Completions parameters a translation may drop where the provider has none; others are refused. */
    droppable: string[];
  };
  /**
   * Follow-up sessions over `previous_response_id`. Optional, without a default object, to keep older
   * identities; `sessionLimitsOf` gives the seed's values where it is absent.
   */
  session?: SessionLimits;
  /** Answer jobs (`background: true`). Optional, without a default object; `jobLimitsOf` fills it in. */
  jobs?: JobLimits;
  /**
   * Limits over time, per principal under this policy (contract section 10). Optional, without a default object: a
   * policy without it keeps its identity and has no limits.
   */
  limits?: Limits;
  /**
   * Where a call's answer cites its sources, checked against the source index the call names
   * (`x-promptgate-sources`, seeds 003 and 004). Optional; `citationsOf` gives `/citations` and `source_id`.
   */
  citations?: { at?: string; field?: string };
  /**
   * A provider's own section (e.g. `[gemini]`: how a response schema is sent to it), by the provider's name: that
   * provider's folder reads and types it; the policy schema validates it and fills its defaults.
   */
  readonly [providerSection: string]: unknown;
}

/** Where the policy's answers cite their sources: a pointer pattern to arrays of citations, and the id member. */
export function citationsOf(policy: Policy): { at: string; field: string } {
  return { at: policy.citations?.at ?? "/citations", field: policy.citations?.field ?? "source_id" };
}

/** How answer jobs run. */
export interface JobLimits {
  /** `gateway`: the gateway runs the job for any provider; `provider`: OpenAI's own background mode, passed through. */
  mode: "gateway" | "provider";
  /** The most jobs the gateway runs at once; more wait in its queue. */
  max_running: number;
  /** Seconds a job may wait in the queue before it fails with `timeout`. */
  queue_seconds: number;
  /** Hours an ended job is kept for polling; after that a poll is 410 JOB_EXPIRED. */
  keep_hours: number;
}

/** The default job limits: run by the gateway, 300 s in the queue, kept 24 h after the end; 16 at once. */
export const defaultJobLimits: JobLimits = { mode: "gateway", max_running: 16, queue_seconds: 300, keep_hours: 24 };

/** The policy's job limits, its own members over the defaults. */
export function jobLimitsOf(policy: Policy): JobLimits {
  return { ...defaultJobLimits, ...policy.jobs };
}

/** A session's lifetime and size caps. */
export interface SessionLimits {
  /** Hours without a turn after which a session has expired. */
  idle_hours: number;
  /** Days after its first turn after which a session has expired, however active. */
  max_days: number;
  /** Estimated tokens (characters / `cache.chars_per_token`) the first turn may carry. */
  max_start_tokens: number;
  /** Estimated tokens a turn may carry with the session's whole history. */
  max_total_tokens: number;
  /** Seconds a turn waits for the session's previous turn to end before it fails `timeout`. */
  queue_seconds: number;
}

/** The default session limits: 24 hours idle, 7 days at most, 900,000 start and 1,000,000 total tokens, 300 s queue. */
export const defaultSessionLimits: SessionLimits = {
  idle_hours: 24,
  max_days: 7,
  max_start_tokens: 900_000,
  max_total_tokens: 1_000_000,
  queue_seconds: 300,
};

/** The policy's session limits, its own members over the seed's. */
export function sessionLimitsOf(policy: Policy): SessionLimits {
  return { ...defaultSessionLimits, ...policy.session };
}

/** The upstream deadline when a policy sets none: 960 s. */
export const defaultDeadlineSeconds = 960;

/** The policy's upstream deadline in seconds. */
export function deadlineSecondsOf(policy: Policy): number {
  return policy.upstream?.deadline_seconds ?? defaultDeadlineSeconds;
}

/** Seconds a provider call may stall at each stage before it ends in `timeout` (contract section 11). */
export interface UpstreamTimeouts {
  /** Until the connection is open and the request goes out. */
  connect: number;
  /** A streamed call's wait, once the request went out, for its answer's head. */
  firstByte: number;
  /** A stream's wait for its next bytes, from its head on. */
  idle: number;
}

/** The stage timeouts of the policy's provider calls: its own `[upstream]` members over the configuration's. */
export function upstreamTimeoutsOf(policy: Policy, config: { upstreamTimeouts: UpstreamTimeouts }): UpstreamTimeouts {
  const defaults = config.upstreamTimeouts;
  const own = policy.upstream;
  if (own === undefined) return defaults;
  if (own.connect_seconds === undefined && own.first_byte_seconds === undefined && own.idle_seconds === undefined) {
    return defaults;
  }
  return {
    connect: own.connect_seconds ?? defaults.connect,
    firstByte: own.first_byte_seconds ?? defaults.firstByte,
    idle: own.idle_seconds ?? defaults.idle,
  };
}

/**
 * A client schema's size when a policy sets none: every schema seen in use is under a tenth of it, and
 * compiling one this size costs under a second (a 1.2 MB one stalled the gateway for seconds).
 */
export const defaultMaxSchemaChars = 100_000;

/** The most code points a client's response schema may have as compact JSON under the policy. */
export function maxSchemaCharsOf(policy: Policy): number {
  return policy.validation.max_schema_chars ?? defaultMaxSchemaChars;
}

/** One declared envelope unwrap (contract section 6). */
export interface RepairRule {
  name: string;
  /** JSON Pointer of the value that may carry the envelope. */
  at: string;
  /** Applies only when the value at this pointer equals `equals` literally. */
  when: { pointer: string; equals: string | number | boolean };
  /** The envelope member, e.g. "choices": a one-element array of the real value. */
  envelope: string;
  /** The unwrapped object must carry this member, or the rule refuses. */
  require_key: string;
}

/** The policy name of a `name@12hex` ref, as records and headers hold it (a name holds no `@`). */
export function policyNameOf(ref: string): string {
  const at = ref.indexOf("@");
  return at === -1 ? ref : ref.slice(0, at);
}

/** One version of a policy: the policy and its content identity. */
export interface PolicyVersion {
  policy: Policy;
  /** Hex sha256 of the policy's canonical JSON. */
  sha256: string;
  /** `name@` plus the first 12 hex digits of sha256: the form shown in prompt_size and headers. */
  ref: string;
  /** Where it was loaded from, for messages. */
  source: string;
}

/** The names of limits over time that a policy's `[limits]` table and a key's `limits` object take. */
export const limitNames = [
  "requests_per_minute",
  "requests_per_hour",
  "requests_per_day",
  "chars_per_minute",
  "chars_per_hour",
  "chars_per_day",
  "chars_per_30_days",
  "tokens_per_day",
  "tokens_per_30_days",
  "concurrent",
] as const;

export type LimitName = (typeof limitNames)[number];

/** Limits over time by name, each a positive integer. */
export type Limits = Readonly<Partial<Record<LimitName, number>>>;
