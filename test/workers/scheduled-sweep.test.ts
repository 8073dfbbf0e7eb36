import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/runtime/workers/worker.js";

// The worker's cron trigger sweeps D1 as a Node gateway sweeps its store: expired rows go, live ones stay.

async function scheduled(at: number): Promise<void> {
  const context = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/10 * * * *" }), env as never, context);
  await waitOnExecutionContext(context);
}

describe("the scheduled sweep", () => {
  it("deletes the cached prefixes that expired and keeps the others", async () => {
    // The first run builds the isolate's dependencies, which migrates D1.
    await scheduled(Date.now());
    const now = Date.now();
    const insert = "INSERT INTO cached_prefixes (name, chars, schema_hashes, expires_at) VALUES (?, 1, '[]', ?)";
    await env.DB.prepare(insert)
      .bind("cachedContents/expired", now - 1_000)
      .run();
    await env.DB.prepare(insert)
      .bind("cachedContents/live", now + 3_600_000)
      .run();
    await scheduled(now);
    const { results } = await env.DB.prepare(
      "SELECT name FROM cached_prefixes WHERE name LIKE 'cachedContents/%'",
    ).all();
    expect(results).toEqual([{ name: "cachedContents/live" }]);
  });
});
