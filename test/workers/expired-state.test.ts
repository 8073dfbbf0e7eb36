import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/runtime/workers/worker.js";

// Issue 52, items 6 and 8 inside workerd, on D1: a session whose model name holds U+0000 or a lone surrogate goes
// on, and an expired job or session keeps its documented answer after the cron sweep, for a week.

const hour = 60 * 60 * 1000;
const day = 24 * hour;

type Json = Record<string, unknown>;

function send(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`http://promptgate.test${path}`, init));
}

function respond(body: Json, key = "sk-edge-alice"): Promise<Response> {
  return send("/openai/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

function poll(id: string, key = "sk-edge-alice"): Promise<Response> {
  return send(`/openai/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
}

async function codeOf(response: Response): Promise<unknown> {
  return ((await response.json()) as { error: { promptgate: { code: string } } }).error.promptgate.code;
}

/** The worker's cron trigger at `at`, as wrangler.toml schedules it. */
async function sweepAt(at: number): Promise<void> {
  const context = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/10 * * * *" }), env as never, context);
  await waitOnExecutionContext(context);
}

/** Moves a row's times back by `ms`, as if it had been written that much earlier. */
async function age(table: "jobs" | "sessions", id: string, ms: number): Promise<void> {
  const columns =
    table === "jobs"
      ? "ended_at = ended_at - ?1, created_at = created_at - ?1, heartbeat_at = heartbeat_at - ?1"
      : "started_at = started_at - ?1, last_turn_at = last_turn_at - ?1";
  await env.DB.prepare(`UPDATE ${table} SET ${columns} WHERE id = ?2`).bind(ms, id).run();
}

describe("client texts in D1", () => {
  it.each([
    ["U+0000", "gpt-test\u0000"],
    ["a lone surrogate", "gpt-test\ud800"],
  ])("continues a session whose model name holds %s", async (_what, model) => {
    const first = await respond({ model, input: "hello" });
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    const next = await respond({ model, input: "and then?", previous_response_id: id });
    expect(next.status).toBe(200);
    const changed = await respond({ model: "gpt-test", input: "other", previous_response_id: id });
    expect(await codeOf(changed)).toBe("SESSION_SETTINGS_CHANGED");
  });
});

describe("expired jobs and sessions after the cron sweep", () => {
  it("answers a poll of an expired job 410 JOB_EXPIRED for a week after the sweep, another principal 404", async () => {
    const created = await respond({ model: "gpt-test", input: "a job to expire", background: true });
    const { id } = (await created.json()) as { id: string };
    let status = "queued";
    for (let attempt = 0; attempt < 100 && !["completed", "failed"].includes(status); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = ((await (await poll(id)).json()) as { status: string }).status;
    }
    expect(status).toBe("completed");
    await age("jobs", id, day + hour);
    await sweepAt(Date.now());
    const expired = await poll(id);
    expect(expired.status).toBe(410);
    expect(await codeOf(expired)).toBe("JOB_EXPIRED");
    expect((await poll(id, "sk-edge-mallory")).status).toBe(404);
    const row = await env.DB.prepare("SELECT response FROM jobs WHERE id = ?").bind(id).first<{ response: string }>();
    expect(row?.response).toBe("null");
    await age("jobs", id, 7 * day);
    await sweepAt(Date.now());
    expect(await env.DB.prepare("SELECT id FROM jobs WHERE id = ?").bind(id).first()).toBeNull();
  });

  it("answers a continuation of an expired session SESSION_EXPIRED for a week after the sweep", async () => {
    const first = await respond({ model: "gpt-test", input: "hello" });
    const { id } = (await first.json()) as { id: string };
    await age("sessions", id, day + hour);
    await sweepAt(Date.now());
    expect(await codeOf(await respond({ model: "gpt-test", input: "late", previous_response_id: id }))).toBe(
      "SESSION_EXPIRED",
    );
    await age("sessions", id, 7 * day);
    await sweepAt(Date.now());
    expect(await codeOf(await respond({ model: "gpt-test", input: "later", previous_response_id: id }))).toBe(
      "SESSION_NOT_FOUND",
    );
  });
});
