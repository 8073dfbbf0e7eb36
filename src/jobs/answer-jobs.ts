import type { DepsOf, JobHost } from "../deps.js";
import { classOfStatus, transientClasses, upstreamErrorMessages } from "../errors/error-classes.js";
import { GatewayError } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { hex } from "../json/sha256-hex.js";
import type { Recorder } from "../pipeline/call-recorder.js";
import type { ResponseHeaders } from "../pipeline/response-headers.js";
import type { SurfaceRequest } from "../pipeline/surface-request.js";
import { logInternalError } from "../pipeline/write-log.js";
import {
  deadlineSecondsOf,
  defaultDeadlineSeconds,
  defaultJobLimits,
  type JobLimits,
  jobLimitsOf,
  type PolicyVersion,
} from "../policy/policy.js";
import { callerOf } from "../sessions/session-turn.js";
import type { JobError, JobRecord, JobState, JobStore, ResponseHistoryStore, SecretStore } from "../store/store.js";
import type { JobRoute } from "../surfaces/surface.js";

/** What answer jobs use of the gateway: the store's jobs, response histories and secret. */
type JobDeps = DepsOf<JobStore & ResponseHistoryStore & SecretStore>;

/** Runs a call again as the job's run: the same route and headers, the given request, under the job's id. */
export type RunAgain = (request: Request, job: string) => Promise<Response>;

/** How often a job's runner says it is alive, and how long a silent one is taken for gone (a crash, a kill). */
const beatMs = 5_000;
const orphanedAfterMs = 20_000;

/** How long a waiting job sleeps between looks for a free place among the running ones. */
const queuePollMs = 25;

const terminal: readonly JobState[] = ["completed", "failed", "cancelled"];
const unfinished: readonly JobState[] = ["queued", "in_progress", "cancelling"];

/** Jobs of tests and runtimes that give no host of their own: kept in this process, nothing waits for them. */
const localHost: JobHost = { local: new Map(), keep: () => {} };

function hostOf(deps: JobDeps): JobHost {
  return deps.jobs ?? localHost;
}

/** A new response id for a job, in the API's form (`resp_` and 48 hex digits). */
function newJobId(): string {
  return `resp_${hex(crypto.getRandomValues(new Uint8Array(24)))}`;
}

/** The job's object as a poll returns it: the API's response object with the job's state and times beside it. */
function shown(job: JobRecord): JsonObject {
  const response = isObject(job.response) ? job.response : {};
  const at = (time: number | undefined) => (time === undefined ? undefined : new Date(time).toISOString());
  const times = { created_at: at(job.createdAt), started_at: at(job.startedAt), ended_at: at(job.endedAt) };
  // A failed job names the ref of its failure, by which its record and log line are found, and whether its class is
  // one a client may retry.
  const error = job.error;
  const ref = error?.ref === undefined || error.ref === "" ? {} : { ref: error.ref };
  const retryable = error === undefined ? {} : { retryable: transientClasses.has(error.code) };
  return { ...response, promptgate: { job: { state: job.state, ...times, ...ref, ...retryable } } };
}

function json(body: unknown, status: number, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...headers, "content-type": "application/json" } });
}

/** What creating a job needs from the call that asks for it. */
export interface JobRequest {
  deps: JobDeps;
  input: SurfaceRequest;
  route: JobRoute;
  policy: PolicyVersion;
  recorder: Recorder;
  headers: ResponseHeaders;
  /** The client's body as sent, `background: true` included. */
  body: JsonObject;
  runAgain: RunAgain;
}

/**
 * Makes a call that passed both checks an answer job: keeps it queued (before anything is sent) and answers at once
 * with its object, while the same call (without `background`) runs in the background as a call of its own, whose
 * answer the job keeps.
 */
export async function createJob(request: JobRequest): Promise<Response> {
  const { deps, input, route, policy, recorder, headers, body } = request;
  const now = deps.now().getTime();
  const id = newJobId();
  const job: JobRecord = {
    id,
    principal: await callerOf(input),
    state: "queued",
    policy: policy.ref,
    createdAt: now,
    heartbeatAt: now,
    response: route.pending(id, body, "queued", now),
  };
  await deps.store.putJob(job);
  recorder.decide("queued");
  recorder.noteJob(id);
  // The run's request: the client's headers (its credential included) live only in this process, never in the store.
  const run = {
    url: input.request.url,
    headers: new Headers(input.request.headers),
    body: JSON.stringify(route.foreground(body)),
  };
  run.headers.delete("content-length");
  const host = hostOf(deps);
  host.keep(
    runJob(deps, host, job, jobLimitsOf(policy.policy), route, (signal) =>
      request.runAgain(new Request(run.url, { method: "POST", headers: run.headers, body: run.body, signal }), id),
    ),
  );
  return json(shown(job), 200, headers.all());
}

/** Why a job's run was aborted. */
type AbortReason = "cancel" | "shutdown";

/**
 * Runs a job: waits for a place among the gateway's running jobs (up to the queue deadline), runs its call, and ends
 * it as `completed` with the call's answer, `failed` with the call's error (its class or code, fixed message and
 * ref), or `cancelled`. Says it is alive every few seconds while it waits and runs, and never throws.
 */
async function runJob(
  deps: JobDeps,
  host: JobHost,
  job: JobRecord,
  limits: JobLimits,
  route: JobRoute,
  call: (signal: AbortSignal) => Promise<Response>,
): Promise<void> {
  const controller = new AbortController();
  const local = { controller, running: false };
  host.local.set(job.id, local);
  const beat = setInterval(() => {
    void beatAndListen(deps, job.id, controller).catch(() => {});
  }, beatMs);
  try {
    if (!(await waitForPlace(deps, host, job, limits, controller))) {
      if (controller.signal.reason === "shutdown") await failJob(deps, job, route, stoppedError(deps));
      return;
    }
    local.running = true;
    const now = deps.now().getTime();
    const started = await deps.store.updateJob(job.id, ["queued"], {
      state: "in_progress",
      startedAt: now,
      heartbeatAt: now,
      response: route.restated(job.response as JsonObject, "in_progress"),
    });
    if (started?.state !== "in_progress") return;
    const response = await call(controller.signal);
    await endJob(deps, started, route, response, controller.signal);
  } catch (cause) {
    const ref = deps.newRef();
    logInternalError(deps, ref, cause, "job", []);
    await failJob(deps, job, route, { code: "internal", message: "The gateway failed to run this job.", ref }).catch(
      () => {},
    );
  } finally {
    clearInterval(beat);
    host.local.delete(job.id);
  }
}

/** The failure of a job the gateway stopped (shut down, or died) while it ran or waited. */
function stoppedError(deps: JobDeps): JobError {
  return { code: "internal", message: "The gateway stopped while the job ran.", ref: deps.newRef() };
}

/** How many of this process's jobs have left the queue. */
function runningCount(host: JobHost): number {
  let count = 0;
  for (const job of host.local.values()) if (job.running) count += 1;
  return count;
}

/** Notes the runner alive, and aborts the run when a cancel was asked elsewhere (another process took it). */
async function beatAndListen(deps: JobDeps, id: string, controller: AbortController): Promise<void> {
  await deps.store.beatJob(id, deps.now().getTime());
  const job = await deps.store.getJob(id);
  if (job?.state === "cancelling" && !controller.signal.aborted) controller.abort("cancel" satisfies AbortReason);
}

/**
 * Waits until fewer jobs run in this gateway than the job's policy allows; false when it was cancelled meanwhile or
 * waited past the queue deadline (then it is failed with `timeout`).
 */
async function waitForPlace(
  deps: JobDeps,
  host: JobHost,
  job: JobRecord,
  limits: JobLimits,
  controller: AbortController,
): Promise<boolean> {
  for (;;) {
    if (controller.signal.aborted) return false;
    if (runningCount(host) < limits.max_running) return true;
    if (deps.now().getTime() - job.createdAt >= limits.queue_seconds * 1000) {
      const message = "The job waited in the queue past its deadline; nothing was sent.";
      await failJob(deps, job, undefined, { code: "timeout", message, ref: deps.newRef() });
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, queuePollMs));
  }
}

/** Ends a job that ran with what its call answered: its answer, its error, or its cancel. */
async function endJob(
  deps: JobDeps,
  job: JobRecord,
  route: JobRoute,
  response: Response,
  signal: AbortSignal,
): Promise<void> {
  const now = deps.now().getTime();
  const running: JobState[] = ["in_progress", "cancelling"];
  const text = await response.text();
  const body = text === "" ? undefined : (JSON.parse(text) as unknown);
  if (signal.aborted && signal.reason === "cancel") {
    await deps.store.updateJob(job.id, running, {
      state: "cancelled",
      endedAt: now,
      response: route.restated(job.response as JsonObject, "cancelled"),
    });
    return;
  }
  if (response.ok && isObject(body)) {
    const answer = route.answered(body, job.id);
    if (typeof body.id === "string" && body.id !== job.id) await aliasHistory(deps, job.id, body.id);
    await deps.store.updateJob(job.id, running, { state: "completed", endedAt: now, response: answer });
    return;
  }
  if (signal.aborted) {
    await failJob(deps, job, route, stoppedError(deps));
    return;
  }
  await failJob(deps, job, route, runFailure(deps, response.status, body));
}

/**
 * A failed run's error as the job keeps it. A gateway error (it carries the `promptgate` member) has fixed text and
 * is kept as it is; any other is a provider's answer relayed under `upstream_errors.text = "passthrough"`, whose text
 * the job, kept in the store, never holds: its status's class and that class's fixed message stand for it.
 */
function runFailure(deps: JobDeps, status: number, body: unknown): JobError {
  const error = isObject(body) && isObject(body.error) ? body.error : {};
  const member = isObject(error.promptgate) ? error.promptgate : undefined;
  if (member !== undefined && typeof member.code === "string" && typeof error.message === "string") {
    return {
      code: member.code,
      message: error.message,
      ref: typeof member.ref === "string" ? member.ref : deps.newRef(),
    };
  }
  const code = classOfStatus(status);
  return { code, message: upstreamErrorMessages[code], ref: deps.newRef() };
}

/** Ends an unfinished job as `failed` with `error`; a job already ended stays as it is. */
async function failJob(deps: JobDeps, job: JobRecord, route: JobRoute | undefined, error: JobError): Promise<void> {
  const base = job.response as JsonObject;
  const response =
    route === undefined
      ? { ...base, status: "failed", error: { code: error.code, message: error.message } }
      : route.failed(base, error);
  await deps.store.updateJob(job.id, unfinished, { state: "failed", endedAt: deps.now().getTime(), response, error });
}

/**
 * A job's answer is known to the client by the job's id, to the provider by its own: the job's id gets the answer's
 * stored history, so that a continuation naming it is measured, bound and pinned as one naming the answer, and sent
 * naming the provider's.
 */
async function aliasHistory(deps: JobDeps, jobId: string, answerId: string): Promise<void> {
  const history = await deps.store.getResponseHistory(answerId, deps.now().getTime());
  if (history === undefined) return;
  await deps.store.putResponseHistory({ ...history, id: jobId, upstream: history.upstream ?? answerId });
}

/** What a poll, cancel or other route of a job needs. */
export interface JobPoll {
  deps: JobDeps;
  input: SurfaceRequest;
  route: JobRoute;
  action: "retrieve" | "cancel" | "delete" | "input_items";
  job: JobRecord;
  headers: ResponseHeaders;
  recorder: Recorder;
}

/**
 * Answers a route of a job the gateway runs, from its state: another principal's job is 404 as an unknown one is; an
 * ended job past its keeping time is 410 JOB_EXPIRED (a week past it too, from the tombstone a sweep leaves); a job
 * whose runner went silent (the process died) or that outlived its deadlines is ended as `failed` first. Cancel is
 * idempotent: a queued job is cancelled at once, a running one once its call is aborted, an ended one stays as it
 * ended.
 */
export async function answerJob(poll: JobPoll): Promise<Response> {
  const { deps, input, route, action, headers, recorder } = poll;
  recorder.noteJob(poll.job.id);
  if (poll.job.principal !== (await callerOf(input))) {
    throw new GatewayError("NOT_FOUND", 404, `No response found with id '${poll.job.id}'.`);
  }
  const limits = limitsOf(deps, poll.job.policy);
  let job = await settleStale(deps, poll.job, route, limits.job, limits.deadlineSeconds);
  const now = deps.now().getTime();
  // A job the sweep left as a tombstone (its answer dropped) expired, whatever its policy version now says.
  const kept = job.endedAt === undefined || now - job.endedAt <= limits.job.keep_hours * 60 * 60 * 1000;
  if (job.response === null || !kept) {
    throw new GatewayError("JOB_EXPIRED", 410, "This answer job ended longer ago than the gateway keeps jobs.");
  }
  recorder.decide("answered");
  if (action === "cancel") job = await cancelJob(deps, job, route);
  else if (action !== "retrieve") {
    throw new GatewayError(
      "INVALID_REQUEST",
      400,
      "An answer job run by the gateway can be retrieved and cancelled; it keeps no input items and is not deleted before its time.",
    );
  }
  return json(shown(job), 200, headers.all());
}

/** The job limits and run deadline of the policy version a job runs under (the defaults when it is no longer known). */
function limitsOf(deps: JobDeps, ref: string): { job: JobLimits; deadlineSeconds: number } {
  try {
    const policy = deps.policies.resolve(ref).policy;
    return { job: jobLimitsOf(policy), deadlineSeconds: deadlineSecondsOf(policy) };
  } catch {
    return { job: defaultJobLimits, deadlineSeconds: defaultDeadlineSeconds };
  }
}

/** Ends an unfinished job whose runner went silent, or that is past its queue or run deadline, as `failed`. */
async function settleStale(
  deps: JobDeps,
  job: JobRecord,
  route: JobRoute,
  limits: JobLimits,
  deadlineSeconds: number,
): Promise<JobRecord> {
  // A job of this process is left to its runner, which enforces the queue and run deadlines itself: a poll that
  // comes between two of its steps, or after a clock jump, would otherwise fail a job that is alive.
  if (terminal.includes(job.state) || hostOf(deps).local.has(job.id)) return job;
  const now = deps.now().getTime();
  let error: JobError | undefined;
  if (job.state === "queued" && now - job.createdAt >= limits.queue_seconds * 1000) {
    const message = "The job waited in the queue past its deadline; nothing was sent.";
    error = { code: "timeout", message, ref: deps.newRef() };
  } else if (job.startedAt !== undefined && now - job.startedAt > deadlineSeconds * 1000 + orphanedAfterMs) {
    // Its runner ends it at the deadline itself; one this much later has no runner left.
    error = { code: "timeout", message: "The provider did not answer in time.", ref: deps.newRef() };
  } else if (now - job.heartbeatAt > orphanedAfterMs) {
    error = stoppedError(deps);
  }
  if (error === undefined) return job;
  await failJob(deps, job, route, error);
  return (await deps.store.getJob(job.id)) ?? job;
}

/** Cancels a job: a queued one at once; a running one by aborting its call, here or (at its next beat) elsewhere. */
async function cancelJob(deps: JobDeps, job: JobRecord, route: JobRoute): Promise<JobRecord> {
  if (terminal.includes(job.state)) return job;
  const now = deps.now().getTime();
  const cancelled = await deps.store.updateJob(job.id, ["queued"], {
    state: "cancelled",
    endedAt: now,
    response: route.restated(job.response as JsonObject, "cancelled"),
  });
  if (cancelled?.state === "cancelled") {
    hostOf(deps)
      .local.get(job.id)
      ?.controller.abort("cancel" satisfies AbortReason);
    return cancelled;
  }
  const cancelling = (await deps.store.updateJob(job.id, ["in_progress"], { state: "cancelling" })) ?? job;
  const local = hostOf(deps).local.get(job.id);
  if (local === undefined) return cancelling;
  local.controller.abort("cancel" satisfies AbortReason);
  // A run of this process ends within moments of its abort: the answer then shows it ended.
  for (let waited = 0; waited < 2_000; waited += queuePollMs) {
    const now = await deps.store.getJob(job.id);
    if (now === undefined || terminal.includes(now.state)) return now ?? cancelling;
    await new Promise((resolve) => setTimeout(resolve, queuePollMs));
  }
  return (await deps.store.getJob(job.id)) ?? cancelling;
}

/** Aborts every job of this process, queued or running (a shutdown): each ends as `failed`, never left running. */
export function stopJobs(host: JobHost): void {
  for (const job of host.local.values()) job.controller.abort("shutdown" satisfies AbortReason);
}
