import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { stopJobs } from "../../src/jobs/answer-jobs.js";
import type { JobRecord } from "../../src/store/store.js";
import { type Gateway, gatewayOn, hour, refusal, stores } from "../support/session-gateway.js";

// Answer jobs (`background: true`) run by the gateway (issue 16), through the openai SDK's responses.create,
// retrieve and cancel, against the simulated providers with a fake clock, on the memory store and on SQLite.

type JobState = "queued" | "in_progress" | "cancelling" | "completed" | "failed" | "cancelled";
type Polled = OpenAI.Responses.Response & { promptgate: { job: { state: JobState } } };

const schema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number" } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};

/** Polls a job until `done` holds (the SDK's own retrieve), at most ~5 s of real time. */
async function pollUntil(client: OpenAI, id: string, done: (job: Polled) => boolean): Promise<Polled> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const job = (await client.responses.retrieve(id)) as Polled;
    if (done(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`job ${id} did not reach the awaited state`);
}

const ended = (job: Polled) => ["completed", "failed", "cancelled"].includes(job.promptgate.job.state);

/** Waits (real time) until the gateway runs `count` jobs. */
async function running(gateway: Gateway, count: number): Promise<void> {
  const runningNow = () => [...gateway.jobs.local.values()].filter((job) => job.running).length;
  for (let attempt = 0; attempt < 200 && runningNow() !== count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(runningNow()).toBe(count);
}

describe.each(stores)("answer jobs on the %s store", (_name, makeStore) => {
  it("answers background: true at once as queued, runs the call, and a poll finds it completed", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const created = (await client.responses.create({
      model: "gpt-4.1",
      input: "A question worth a job.",
      background: true,
    })) as Polled;
    expect(created).toMatchObject({ status: "queued", background: true, promptgate: { job: { state: "queued" } } });
    expect(created.id).toMatch(/^resp_[0-9a-f]{48}$/);
    const done = await pollUntil(client, created.id, ended);
    expect(done).toMatchObject({ id: created.id, status: "completed", background: true });
    expect(done.promptgate.job.state).toBe("completed");
    expect(done.output_text.length).toBeGreaterThan(0);
    // The run sent the call without `background`; the create's record says it was queued as this job.
    const sent = gateway.sent.filter((request) => request.path.endsWith("/responses"));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).not.toHaveProperty("background");
    expect(gateway.records.map((record) => [record.decision, record.job])).toEqual(
      expect.arrayContaining([
        ["queued", created.id],
        ["sent", created.id],
      ]),
    );
  });

  it("validates a job's structured answer like a synchronous one", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "investigation.bounded" });
    const created = await client.responses.create({
      model: "gpt-4.1",
      input: "Answer with a confidence.",
      background: true,
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    });
    const done = await pollUntil(client, created.id, ended);
    expect(done.status).toBe("completed");
    const parsed = JSON.parse(done.output_text) as Record<string, unknown>;
    expect(typeof parsed.answer).toBe("string");
    expect(typeof parsed.confidence).toBe("number");
    const run = gateway.records.find((record) => record.job === created.id && record.decision === "sent");
    expect(run?.validation).toMatchObject({ valid: true });
  });

  it("refuses an oversize background call at once, making no job and sending nothing", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "investigation.bounded" });
    const refused = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "x".repeat(30_000), background: true }),
    );
    expect(refused).toMatchObject({ status: 400, code: "INVESTIGATION_PROMPT_LIMIT" });
    expect(gateway.sent).toEqual([]);
  });

  it("answers another principal's poll as an unknown id (404)", async () => {
    const gateway = await gatewayOn(makeStore);
    const created = await gateway
      .client({ key: "sk-alice" })
      .responses.create({ model: "gpt-4.1", input: "mine", background: true });
    const theirs = await refusal(gateway.client({ key: "sk-mallory" }).responses.retrieve(created.id));
    expect(theirs.status).toBe(404);
    expect(theirs.promptgate).toBe("NOT_FOUND");
  });

  it("fails a job's run with the class, fixed message and ref of the call's error", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    const created = await client.responses.create({
      model: "gpt-4.1",
      input: "next",
      previous_response_id: first.id,
      background: true,
    });
    // The session expires while the job waits for nothing: the run meets the expiry the create did not.
    gateway.clock.now += 25 * hour;
    const done = await pollUntil(client, created.id, ended);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: "SESSION_EXPIRED" });
    // The failure's ref is the run's record.
    const ref = (done.promptgate.job as { ref?: string }).ref;
    expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(done.promptgate.job).toMatchObject({ retryable: false });
    expect(gateway.records.find((record) => record.ref === ref)).toMatchObject({
      job: created.id,
      error: "SESSION_EXPIRED",
    });
  });

  it("leaves a queued job of this process to its runner when a poll comes first, however far the clock jumped", async () => {
    // The run's move to in_progress is held until a poll has been answered: the poll sees the job queued 25 h after
    // its creation, past the 300 s queue deadline, yet its runner already had its place.
    let pollAnswered: () => void = () => {};
    const polled = new Promise<void>((resolve) => {
      pollAnswered = resolve;
    });
    const gateway = await gatewayOn(async () => {
      const store = await makeStore();
      const updateJob = store.updateJob.bind(store);
      store.updateJob = async (id, from, change) => {
        if (change.state === "in_progress") await polled;
        return updateJob(id, from, change);
      };
      return store;
    });
    const client = gateway.client();
    const created = await client.responses.create({ model: "gpt-4.1", input: "hello", background: true });
    gateway.clock.now += 25 * hour;
    const early = (await client.responses.retrieve(created.id)) as Polled;
    pollAnswered();
    expect(early.promptgate.job.state).toBe("queued");
    const done = await pollUntil(client, created.id, ended);
    expect(done.status).toBe("completed");
  });

  it("keeps no provider text in a failed job, even under a policy that relays it to synchronous calls", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "errors.passthrough" });
    const created = await client.responses.create({ model: "gpt-4.1", input: "provider-failure", background: true });
    const done = await pollUntil(client, created.id, ended);
    expect(done).toMatchObject({
      status: "failed",
      error: { code: "upstream", message: "The provider failed or could not be reached." },
    });
    const kept = await gateway.store.getJob(created.id);
    expect(JSON.stringify(kept)).not.toContain("raw provider text");
    expect(JSON.stringify(kept)).not.toContain("sk-live");
  });

  it("refuses background with stream: a job is polled", async () => {
    const gateway = await gatewayOn(makeStore);
    const refused = await refusal(
      gateway.client().responses.create({ model: "gpt-4.1", input: "hi", background: true, stream: true }),
    );
    expect(refused).toMatchObject({ status: 400, code: "INVALID_REQUEST", param: "stream" });
    expect(gateway.sent).toEqual([]);
  });

  it("cancels a running job by aborting its call; a second cancel answers the same", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const release = gateway.gate();
    const created = await client.responses.create({ model: "gpt-4.1", input: "slow", background: true });
    await running(gateway, 1);
    const cancelled = (await client.responses.cancel(created.id)) as Polled;
    expect(cancelled).toMatchObject({ status: "cancelled", promptgate: { job: { state: "cancelled" } } });
    const again = (await client.responses.cancel(created.id)) as Polled;
    expect(again).toMatchObject({ status: "cancelled" });
    release();
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
  });

  it("keeps jobs past the gateway's cap queued, cancels a queued one at once, and fails one past the queue deadline", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "jobs.one" });
    const release = gateway.gate();
    const first = await client.responses.create({ model: "gpt-4.1", input: "one", background: true });
    await running(gateway, 1);
    const second = await client.responses.create({ model: "gpt-4.1", input: "two", background: true });
    const third = await client.responses.create({ model: "gpt-4.1", input: "three", background: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(((await client.responses.retrieve(second.id)) as Polled).promptgate.job.state).toBe("queued");
    expect((await client.responses.cancel(second.id)).status).toBe("cancelled");

    gateway.clock.now += 301_000;
    const late = await pollUntil(client, third.id, ended);
    expect(late).toMatchObject({
      status: "failed",
      error: { code: "timeout" },
      promptgate: { job: { retryable: true } },
    });
    release();
    expect((await pollUntil(client, first.id, ended)).status).toBe("completed");
    // Neither queued job reached the provider.
    expect(gateway.sent.filter((request) => request.path.endsWith("/responses"))).toHaveLength(1);
  });

  it("answers a poll of an ended job past its keeping time with 410 JOB_EXPIRED, an unknown id with 404", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: "pg-alice" });
    const client = gateway.client({ key: "pg-alice" });
    const created = await client.responses.create({ model: "gpt-4.1", input: "keep me", background: true });
    await pollUntil(client, created.id, ended);
    gateway.clock.now += 24 * hour;
    expect((await client.responses.retrieve(created.id)).status).toBe("completed");
    gateway.clock.now += 1_000;
    expect(await refusal(client.responses.retrieve(created.id))).toMatchObject({
      status: 410,
      promptgate: "JOB_EXPIRED",
    });
    expect(await refusal(client.responses.retrieve("resp_never_made"))).toMatchObject({ status: 404 });
  });

  it("still answers its principal 410 JOB_EXPIRED after a sweep, for 7 days past the expiry, and others 404", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ key: "sk-alice" });
    const created = await client.responses.create({ model: "gpt-4.1", input: "keep me", background: true });
    await pollUntil(client, created.id, ended);
    const endedAt = gateway.clock.now;
    const expired = { status: 410, promptgate: "JOB_EXPIRED" };
    gateway.clock.now = endedAt + 24 * hour + 1_000;
    await gateway.sweep();
    expect(await refusal(client.responses.retrieve(created.id))).toMatchObject(expired);
    expect(await refusal(client.responses.cancel(created.id))).toMatchObject(expired);
    const theirs = await refusal(gateway.client({ key: "sk-mallory" }).responses.retrieve(created.id));
    expect(theirs).toMatchObject({ status: 404, promptgate: "NOT_FOUND" });
    // Its answer is gone from the store: only the tombstone is left.
    expect((await gateway.store.getJob(created.id))?.response).toBeNull();
    gateway.clock.now = endedAt + (24 + 7 * 24) * hour;
    await gateway.sweep();
    expect(await refusal(client.responses.retrieve(created.id))).toMatchObject(expired);
    gateway.clock.now += 1_000;
    await gateway.sweep();
    expect(await gateway.store.getJob(created.id)).toBeUndefined();
  });

  it("ends a job whose runner went silent (its process died) as failed (internal) at the next poll", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const created = await client.responses.create({ model: "gpt-4.1", input: "made here", background: true });
    const made = await pollUntil(client, created.id, ended);
    // A job another process was running when it died: in the store, running, its last beat 21 s ago.
    const orphan = { ...(await gateway.store.getJob(created.id)), id: "resp_orphan" } as JobRecord;
    const now = gateway.clock.now;
    await gateway.store.putJob({
      ...orphan,
      state: "in_progress",
      startedAt: now,
      heartbeatAt: now - 21_000,
      response: made,
    });
    const polled = (await client.responses.retrieve("resp_orphan")) as Polled;
    expect(polled).toMatchObject({
      status: "failed",
      error: { code: "internal" },
      promptgate: { job: { state: "failed" } },
    });
    // One beat short of it, a job is still taken for running.
    await gateway.store.putJob({
      ...orphan,
      id: "resp_alive",
      state: "in_progress",
      startedAt: now,
      heartbeatAt: now - 19_000,
    });
    expect(((await client.responses.retrieve("resp_alive")) as Polled).promptgate.job.state).toBe("in_progress");
  });

  it("ends every running job as failed when the gateway stops, never leaving one running", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const release = gateway.gate();
    const created = await client.responses.create({ model: "gpt-4.1", input: "stopped", background: true });
    await running(gateway, 1);
    stopJobs(gateway.jobs);
    const done = await pollUntil(client, created.id, ended);
    expect(done).toMatchObject({
      status: "failed",
      error: { code: "internal", message: "The gateway stopped while the job ran." },
    });
    release();
  });

  it("continues a job's answer by its job id, on OpenAI and on a routed model", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const jobIds: string[] = [];
    for (const model of ["gpt-4.1", "gemini-2.5-flash"]) {
      const created = await client.responses.create({ model, input: "Remember OSPREY.", background: true });
      jobIds.push(created.id);
      const done = await pollUntil(client, created.id, ended);
      expect(done.status).toBe("completed");
      const next = await client.responses.create({ model, input: "Which bird?", previous_response_id: created.id });
      expect(next.status).toBe("completed");
    }
    const openai = gateway.sent.filter((request) => request.path.endsWith("/responses")).at(-1);
    // OpenAI knows the answer by its own id, which the continuation names, not by the job's.
    expect(openai?.body.previous_response_id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(openai?.body.previous_response_id).not.toBe(jobIds[0]);
    const gemini = gateway.sent.filter((request) => request.path.includes(":generateContent")).at(-1);
    expect(JSON.stringify(gemini?.body.contents)).toContain("Remember OSPREY.");
  });
});
