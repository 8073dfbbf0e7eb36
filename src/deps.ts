import type { Config } from "./config.js";
import type { JsonScanner } from "./json/json-scanner.js";
import type { KeyRing } from "./keys/named-key.js";
import type { HmacSha256 } from "./pipeline/principal.js";
import type { WritablePolicyRegistry } from "./policy/policy-registry.js";
import type { PolicyReload } from "./policy/reload-policies.js";
import type { CallMetrics } from "./record/call-metrics.js";
import type { CallRecord } from "./record/call-record.js";
import type { CallTracing } from "./record/call-tracing.js";
import type { LogEntry } from "./record/log-entry.js";
import type { ModelTable } from "./routing/model-table.js";
import type { SchemaValidators } from "./schema/schema-validators.js";
import type { Store } from "./store/store.js";
import type { Surface } from "./surfaces/surface.js";
import type { Transport } from "./transport/transport.js";

/** What a runtime provides to the app. */
export interface Deps {
  config: Config;
  /** Policy versions: the files' current ones, and every one kept in the store. */
  policies: WritablePolicyRegistry;
  /**
   * Re-reads the policy folder and switches `policies` to it when it is valid as a whole, else keeps them
   * (`trigger`, for the log: `SIGHUP`, `POST /promptgate/admin/policies/reload`). Absent where policies are
   * bundled at build time (Workers): a policy change there is a deploy.
   */
  reloadPolicies?: (trigger: string) => Promise<PolicyReload>;
  transport: Transport;
  /** Where each model name goes: provider, provider's model id, reasoning levels, fallback (`models.toml`). */
  models: ModelTable;
  /** Every provider surface the gateway serves (src/surfaces/surfaces.ts): a call's own, and those the model table routes to. */
  surfaces: readonly Surface[];
  /** Reads request bodies into tapes, made once per runtime (Node's checks UTF-8 natively first). */
  jsonScanner: JsonScanner;
  /** Named full response schemas for `x-promptgate-schema`, by name. */
  schemas: ReadonlyMap<string, unknown>;
  /**
   * The validators of response schemas, built by the runtime: Node compiles with Ajv in a worker thread, Workers
   * interpret with named schemas precompiled.
   */
  schemaValidators: SchemaValidators;
  /** Durable state: policy versions, case freezes, prefix sizes, named keys, call records. */
  store: Store;
  /** The named keys: those of `keys.toml`, and the store's as last read (see `createKeyRing`). */
  keyRing: KeyRing;
  /**
   * The value of a server-held credential a named key names (`credentials`), by its environment variable (Workers: its
   * secret binding); undefined when it is not set.
   */
  secretNamed: (variable: string) => string | undefined;
  /**
   * The runtime's synchronous HMAC-SHA256 (Node's), for a caller's principal; absent: WebCrypto's, whose every
   * signature waits for a job of its own (a call under a policy's limits hashes its caller's credential).
   */
  hmacSha256?: HmacSha256;
  /**
   * Appends a call record. Resolves once the runtime holds it as firmly as it can before the
   * answer goes out (Node: committed to the store; Workers: handed to `waitUntil`); never rejects.
   */
  recordCall: (record: CallRecord) => Promise<void>;
  /**
   * The log: a call's one structured line (at `logLevelOf(line)`), an internal error with its redacted
   * stack (at `error`), or a request refused before authentication, which the log only counts (one
   * line a minute at most, so a flood cannot fill the disk). Must not throw. Absent: no log.
   */
  log?: (entry: LogEntry) => void;
  /**
   * Runs what a call's answer need not wait for (its log line, its metrics) once the answer is on its way (Node: after
   * the answers of this turn of the event loop are written). Absent: at once, before the answer.
   */
  afterAnswer?: (work: () => void) => void;
  /** A fresh `ref_…` id per call; injected so tests can fix it. */
  newRef: () => string;
  /** The current time; injected so tests can fix it. */
  now: () => Date;
  /** Where answer jobs run past the request that made them; absent: in this process, nothing waits for them. */
  jobs?: JobHost;
  /** The runtime's metrics of every call (Node: Prometheus); absent: none, and no `/metrics` route. */
  metrics?: CallMetrics;
  /** The runtime's traces of every call (Node: OpenTelemetry with `OTEL_EXPORTER_OTLP_ENDPOINT`); absent: none. */
  tracing?: CallTracing;
}

/** `Deps` whose store is only the parts a module uses (`Deps` itself is one). */
export type DepsOf<S> = Omit<Deps, "store"> & { store: S };

/** The runtime's place for answer jobs. */
export interface JobHost {
  /** The jobs of this process, queued or running, by id: aborting one (`cancel`, `shutdown`) ends it. */
  local: Map<string, LocalJob>;
  /** Keeps the runtime alive while a job runs (Node: its shutdown waits; Workers: `waitUntil`). */
  keep(task: Promise<void>): void;
}

/** A job of this process: what aborts it, and whether it has left the queue. */
export interface LocalJob {
  controller: AbortController;
  running: boolean;
}
