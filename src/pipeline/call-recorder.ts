import type { Deps } from "../deps.js";
import { timedOutStageOf } from "../errors/classify.js";
import type { GatewayError, UpstreamErrorRecord } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { NamedKey } from "../keys/named-key.js";
import type { LogicalCall } from "../logical-call.js";
import type { CallAttempt, CallDecision, CallRecord } from "../record/call-record.js";
import { errorClassOf, type InternalStage } from "../record/internal-error-line.js";
import type { Validation } from "../schema/diagnostics.js";
import type { ResponseFacts, TokenUsage } from "../surfaces/surface.js";
import type { RemovedCitation } from "../window/citations.js";
import { completeCall } from "./complete-call.js";
import { logInternalError } from "./write-log.js";

/** What the steps that relay an answer need of a call's recorder: to read it, report a failure, and end it. */
export interface CallRecorder {
  readonly record: Readonly<CallRecord>;
  /**
   * A failure of the gateway's own: logged with its stack under the call's ref and, the first one,
   * noted on the record, unless the record is kept already (a proxied stream's end).
   */
  internal(cause: unknown, during: InternalStage): void;
  /**
   * Releases what the call holds (its deadline), then keeps its record and writes its log line, once
   * however often it is asked; resolves when the record is kept, and never rejects.
   */
  settle(): Promise<void>;
  /** Adds something the call holds (a session's turn), given back when it settles, before its record is kept. */
  hold(release: () => Promise<void>): void;
}

/** What a recorder needs besides the record. */
export interface RecorderOptions {
  /** What an internal error's stack must not show: the configured keys and the client's credentials. */
  secrets: () => readonly string[];
  /** Frees what the call holds once it ends: its deadline's timer and client watch. */
  release: () => void;
}

/** What one attempt of a call established: where it went, its checks' sizes and its prepared schema. */
export interface AttemptFacts {
  /** `simulated`, or the upstream's origin. */
  provider: string;
  /** The provider's own model id, where the model table routes the call to one other than the name it asked for. */
  upstreamModel: string | undefined;
  preflight?: PromptSize | undefined;
  providerCheck?: PromptSize | undefined;
  /** What the schema projection left out, once the attempt was prepared. */
  omitted?: string[] | undefined;
  /** The response schema's name, where the gateway knows it. */
  schema?: string | undefined;
}

/** At most this many paths of other fields are kept in a call record. */
const maxRecordedFields = 100;

/** At most this many removed citations are kept in a call record. */
const maxRecordedCitations = 100;

/**
 * The one owner of a call's record: every fact a step establishes is noted through a method of its own, and every
 * path, streamed or not, settles it exactly once.
 */
export class Recorder implements CallRecorder {
  readonly #deps: Deps;
  readonly #record: CallRecord;
  readonly #options: RecorderOptions;
  readonly #held: (() => Promise<void>)[] = [];
  #settled: Promise<void> | undefined;

  constructor(deps: Deps, record: CallRecord, options: RecorderOptions) {
    this.#deps = deps;
    this.#record = record;
    this.#options = options;
  }

  get record(): Readonly<CallRecord> {
    return this.#record;
  }

  /** The case and call label the request names, and the answer job it runs, if any. */
  noteLabels(caseId: string | undefined, callLabel: string | undefined, job: string | undefined): void {
    this.#record.case = caseId;
    this.#record.call_label = callLabel;
    this.#record.job = job;
  }

  /** The named key the call presented, if any. */
  noteKey(key: NamedKey | undefined): void {
    if (key !== undefined) this.#record.key = { id: key.id, name: key.name, team: key.team ?? null };
  }

  /** The call label that applies: a session's, where a turn continues one. */
  noteCallLabel(callLabel: string | undefined): void {
    this.#record.call_label = callLabel;
  }

  /** The policy version that applies (or, before a case's is known, the one the call asked for). */
  notePolicy(ref: string): void {
    this.#record.policy = ref;
  }

  /** The answer job the call created, polled, cancelled or ran. */
  noteJob(id: string): void {
    this.#record.job = id;
  }

  /** The model a parsed call names, and what it counted as other and could not measure, by JSON path. */
  noteParsed(call: LogicalCall): void {
    this.#record.model = call.model;
    if (call.other.length > 0) {
      this.#record.other_fields = call.other.slice(0, maxRecordedFields).map((field) => field.path);
    }
    if (call.unmeasured.length > 0) this.#record.unmeasured = call.unmeasured.map((content) => content.path);
  }

  /** The model a body names, where no parsed call named one before (a request refused as invalid). */
  noteModelOfBody(model: string | undefined): void {
    this.#record.model ??= model;
  }

  /**
   * The facts of the attempt whose answer the client gets (or whose refusal it gets): its provider, routed model,
   * checks' sizes and schema. A preflight that was not measured leaves the one measured before.
   */
  noteAttempt(facts: AttemptFacts): void {
    const record = this.#record;
    record.provider = facts.provider;
    record.upstream_model = facts.upstreamModel;
    if (facts.omitted !== undefined) record.projection_omitted = facts.omitted;
    if (facts.schema !== undefined) record.schema = facts.schema;
    this.noteMeasured(facts.preflight, facts.providerCheck);
  }

  /** The checks' sizes; a preflight that was not measured leaves the one measured before. */
  noteMeasured(preflight: PromptSize | undefined, providerCheck: PromptSize | undefined): void {
    this.#record.preflight = preflight ?? this.#record.preflight;
    this.#record.provider_check = providerCheck;
  }

  /** One attempt of a call that fell back, in the order they were made. */
  noteFallbackAttempt(attempt: CallAttempt): void {
    this.#record.attempts ??= [];
    this.#record.attempts.push(attempt);
  }

  /** What the gateway decided about the call. */
  decide(decision: CallDecision): void {
    this.#record.decision = decision;
  }

  /** The status of the provider's answer the client's answer comes from. */
  noteUpstreamStatus(status: number): void {
    this.#record.upstream_status = status;
  }

  /** The provider's token counts; a stream's later events (its totals) replace earlier ones. */
  noteUsage(usage: TokenUsage | undefined): void {
    if (usage === undefined) return;
    this.#record.usage = {
      ...this.#record.usage,
      ...(usage.input === undefined ? {} : { input_tokens: usage.input }),
      ...(usage.output === undefined ? {} : { output_tokens: usage.output }),
    };
  }

  /**
   * The provider's response id and finish reasons: the first id a stream names, its last finish reasons; bounded,
   * as a provider writes them (at most 16 reasons of 64 characters, an id of 200).
   */
  noteResponseFacts(facts: ResponseFacts): void {
    const record = this.#record;
    if (facts.id !== undefined && record.response_id === undefined) record.response_id = facts.id.slice(0, 200);
    if (facts.finishReasons !== undefined) {
      record.finish_reasons = facts.finishReasons.slice(0, 16).map((reason) => reason.slice(0, 64));
    }
  }

  /** The citations taken out of the answer (at most 100, a long id or path cut). */
  noteCitationsRemoved(removed: readonly RemovedCitation[]): void {
    this.#record.citations_removed = removed.slice(0, maxRecordedCitations).map(recordedCitation);
  }

  /** The validation outcome of the answer, and the repair that applied, if any. */
  noteValidation(validation: Validation, repair?: { rule: string; original: string }): void {
    this.#record.validation = validation;
    if (repair !== undefined) this.#record.repair = { rule: repair.rule, original: repair.original };
  }

  /** A provider failure as it came, where the client gets an error of the gateway's for it. */
  noteUpstreamError(upstreamError: UpstreamErrorRecord | undefined): void {
    this.#record.upstream_error = upstreamError;
  }

  /**
   * A failure's code, the window of a limit that refused the call, and what the provider said and the stage timeout
   * that ended its call, where known.
   */
  noteFailure(error: GatewayError): void {
    const record = this.#record;
    record.error = error.code;
    const limit = error.details.limit;
    if (limit !== undefined) {
      record.limit = {
        window: limit.window,
        limit: limit.limit,
        used: limit.used,
        retry_after_seconds: limit.retry_after_seconds,
      };
    }
    if (error.details.upstreamError !== undefined) record.upstream_error = error.details.upstreamError;
    const timedOut = timedOutStageOf(error.details.upstreamError?.reason);
    if (timedOut !== undefined) record.upstream_timeout = timedOut;
  }

  /** The provider request's times, in milliseconds since it went out (`performance.now()` values). */
  noteTiming(startedAt: number, firstByteAt: number, endedAt: number | undefined): void {
    const ms = (at: number) => Math.round((at - startedAt) * 10) / 10;
    this.#record.upstream_timing = {
      first_byte_ms: ms(firstByteAt),
      ...(endedAt === undefined ? {} : { total_ms: ms(endedAt) }),
    };
  }

  /** A recall of the window toolkit: the evidence it named and the page it chose. */
  noteRecall(evidence: string, page: number): void {
    this.#record.recall = { evidence, page };
  }

  /** How many pages the recalled evidence has. */
  noteRecallPages(pages: number): void {
    if (this.#record.recall !== undefined) this.#record.recall.pages = pages;
  }

  internal(cause: unknown, during: InternalStage): void {
    if (this.#settled === undefined && this.#record.internal_error === undefined) {
      this.#record.internal_error = { during, class: errorClassOf(cause) };
    }
    logInternalError(this.#deps, this.#record.ref, cause, during, this.#options.secrets());
  }

  settle(): Promise<void> {
    if (this.#settled === undefined) {
      this.#options.release();
      const deps = this.#deps;
      const record = this.#record;
      this.#settled =
        this.#held.length === 0
          ? completeCall(deps, record)
          : this.#releaseHeld().then(() => completeCall(deps, record));
    }
    return this.#settled;
  }

  hold(release: () => Promise<void>): void {
    this.#held.push(release);
  }

  async #releaseHeld(): Promise<void> {
    for (const release of this.#held) {
      try {
        await release();
      } catch (cause) {
        this.internal(cause, "release");
      }
    }
  }
}

/** The recorder of one call. */
export function callRecorder(deps: Deps, record: CallRecord, options: RecorderOptions): Recorder {
  return new Recorder(deps, record, options);
}

/** A removed citation as the record keeps it: a source id is the model's text, so a long one is cut. */
function recordedCitation(citation: RemovedCitation): RemovedCitation {
  const id = citation.source_id === null ? [] : [...citation.source_id];
  const path = [...citation.path];
  return {
    path: path.length > 300 ? `${path.slice(0, 300).join("")}…` : citation.path,
    source_id: id.length > 100 ? `${id.slice(0, 100).join("")}…` : citation.source_id,
    reason: citation.reason,
  };
}
