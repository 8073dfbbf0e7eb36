import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { createKeyRing, withStartUpKeyMode } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import { limitNames } from "../../src/policy/policy.js";
import { refusingWindow } from "../../src/record/call-metrics.js";
import type { CallRecord, RecordedLimit } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { maxTeamLabels, prometheusMetrics } from "../../src/runtime/node/prometheus-metrics.js";
import { policies as bundledPolicies, modelTable } from "../../src/runtime/workers/generated/assets.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import { callRecord } from "../store/store-contract.js";
import { inProcessUpstream } from "../support/in-process-upstream.js";
import { testSchemaValidators } from "../support/schema-validators.js";

// promptgate_limit_rejections_total{team,window}: the calls a limit over time refused, by the named key's team and
// the window that refused them, from the call's record.

const metricsOf = () => prometheusMetrics({ models: () => modelTableOf(modelTable, surfaces), public: false });

function refused(ref: string, window: string, team: string | null = "analytics"): CallRecord {
  const limit: RecordedLimit = { window, limit: 10, used: 10, retry_after_seconds: 30 };
  return callRecord(ref, undefined, {
    decision: "rejected",
    error: "RATE_LIMITED",
    limit,
    key: { id: "key_0123456789abcdef01234567", name: "reporting-ci", team },
  });
}

function limitLines(body: string): string[] {
  return body.split("\n").filter((line) => line.startsWith("promptgate_limit_rejections_total{"));
}

describe("promptgate_limit_rejections_total", () => {
  it("counts a call a limit refused by team and window, and no other call", async () => {
    const metrics = metricsOf();
    metrics.observe(refused("ref_1", "requests_per_minute"), 3);
    metrics.observe(refused("ref_2", "requests_per_minute"), 3);
    metrics.observe({ ...refused("ref_3", "chars_per_day", null), error: "BUDGET_EXHAUSTED" }, 3);
    metrics.observe(callRecord("ref_4", undefined, { decision: "rejected", error: "PROMPT_TOO_LARGE" }), 3);
    metrics.observe(callRecord("ref_5", undefined), 3);
    const { body } = await metrics.render();
    expect(body).toContain("# TYPE promptgate_limit_rejections_total counter");
    expect(limitLines(body).sort()).toEqual([
      'promptgate_limit_rejections_total{team="analytics",window="requests_per_minute"} 2',
      'promptgate_limit_rejections_total{team="none",window="chars_per_day"} 1',
    ]);
  });

  it("bounds the window label to the limit names, any other name other", () => {
    for (const name of limitNames) expect(refusingWindow(refused("ref", name))).toBe(name);
    expect(refusingWindow(refused("ref", "requests_per_fortnight"))).toBe("other");
    expect(refusingWindow(refused("ref", 'a"b'))).toBe("other");
    expect(refusingWindow(callRecord("ref", undefined))).toBeUndefined();
  });

  it("bounds the team label as the calls counter does", async () => {
    const metrics = metricsOf();
    for (let index = 0; index < maxTeamLabels + 10; index++) {
      metrics.observe(refused(`ref_${index}`, "concurrent", `t${index}`), 3);
    }
    const lines = limitLines((await metrics.render()).body);
    expect(lines).toHaveLength(maxTeamLabels + 1);
    expect(lines).toContain('promptgate_limit_rejections_total{team="other",window="concurrent"} 10');
  });

  it("counts a call the gateway refused under a key's limit, its record naming the window", async () => {
    const upstream = inProcessUpstream();
    const store = memoryStore();
    const environment: Record<string, string> = {
      ...upstream.environment,
      PROMPTGATE_DB: "memory",
      PROMPTGATE_LOG: "silent",
      PROMPTGATE_ADMIN_KEY: "admin-key-for-limit-metrics",
      PROMPTGATE_KEY_MODE: "keys",
      OPENAI_API_KEY: "sk-server-held",
    };
    const configured = readConfig(environment);
    const records: CallRecord[] = [];
    const metrics = metricsOf();
    const clock = Date.parse("2026-12-07T12:00:30Z");
    const deps: Deps = {
      config: await withStartUpKeyMode(configured, store, []),
      policies: await identifyPolicies(bundledPolicies),
      models: modelTableOf(modelTable, surfaces),
      surfaces,
      transport: fetchTransport(upstream.fetch),
      jsonScanner: new JsonScanner(),
      schemas: new Map(),
      schemaValidators: testSchemaValidators,
      store,
      keyRing: createKeyRing({ store, unnamedKeys: [], fileKeys: [] }),
      secretNamed: (variable) => environment[variable],
      recordCall: async (record) => {
        records.push(record);
      },
      newRef,
      now: () => new Date(clock),
      metrics,
    };
    const app = createApp(deps);
    const made = await app.request("/promptgate/admin/keys", {
      method: "POST",
      headers: { authorization: "Bearer admin-key-for-limit-metrics", "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", team: "team-a", limits: { requests_per_minute: 1 } }),
    });
    const { key } = (await made.json()) as { key: string };
    const chat = async () => {
      const response = await app.request("/openai/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "Count this call." }] }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await chat()).toBe(200);
    expect(await chat()).toBe(429);
    expect(records.at(-1)).toMatchObject({
      decision: "rejected",
      error: "RATE_LIMITED",
      limit: { window: "requests_per_minute", limit: 1, used: 1, retry_after_seconds: 30 },
    });
    expect(records[0]?.limit).toBeUndefined();
    const { body } = await metrics.render();
    expect(limitLines(body)).toEqual([
      'promptgate_limit_rejections_total{team="team-a",window="requests_per_minute"} 1',
    ]);
  });
});
