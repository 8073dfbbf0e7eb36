import { describe, expect, it } from "vitest";
import { callLogLine } from "../../src/record/call-log-line.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { logLines } from "../../src/record/log-entry.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { spanOf } from "../../src/runtime/node/gen-ai-span.js";
import { maxTeamLabels, prometheusMetrics, teamLabels } from "../../src/runtime/node/prometheus-metrics.js";
import { modelTable } from "../../src/runtime/workers/generated/assets.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { callRecord } from "../store/store-contract.js";

// The named key of a call in its log line, its metrics and its span: ids, names and operators' teams only.

const key = { id: "key_0123456789abcdef01234567", name: "reporting-ci", team: "analytics" };

function keyed(ref: string, team: string | null = key.team): CallRecord {
  return callRecord(ref, undefined, { key: { ...key, team } });
}

describe("the call's log line", () => {
  it("carries the id and name of the named key", () => {
    const line = callLogLine(keyed("ref_1"), 12);
    expect(line).toMatchObject({ key_id: key.id, key_name: key.name });
    const written = logLines()(line, 0);
    expect(JSON.parse(JSON.stringify(written?.line))).toMatchObject({ key_id: key.id, key_name: key.name });
  });

  it("leaves both out for a call without one", () => {
    const text = JSON.stringify(callLogLine(callRecord("ref_2", undefined), 12));
    expect(text).not.toContain("key_id");
    expect(text).not.toContain("key_name");
  });
});

describe("the team label of the call metrics", () => {
  it("names a named key's team, and none without a key or a team", () => {
    const label = teamLabels();
    expect(label(keyed("ref_1"))).toBe("analytics");
    expect(label(keyed("ref_2", null))).toBe("none");
    expect(label(callRecord("ref_3", undefined))).toBe("none");
  });

  it(`names at most ${maxTeamLabels} teams in a process, every later one other, the ones named still by name`, () => {
    const label = teamLabels();
    for (let index = 0; index < maxTeamLabels; index++) {
      expect(label(keyed(`ref_${index}`, `team-${index}`))).toBe(`team-${index}`);
    }
    expect(label(keyed("ref_late", "team-late"))).toBe("other");
    expect(label(keyed("ref_again", "team-7"))).toBe("team-7");
    expect(label(keyed("ref_none", null))).toBe("none");
  });

  it("names no team an operator could not have given, nor one that reads as none or other", () => {
    const label = teamLabels();
    expect(label(keyed("ref_1", 'a"b'))).toBe("other");
    expect(label(keyed("ref_2", "x".repeat(65)))).toBe("other");
    expect(label(keyed("ref_3", "none"))).toBe("other");
    expect(label(keyed("ref_4", "other"))).toBe("other");
  });

  it("labels the calls counter by team, never past the bound", async () => {
    const metrics = prometheusMetrics({ models: () => modelTableOf(modelTable, surfaces), public: false });
    for (let index = 0; index < maxTeamLabels + 20; index++) metrics.observe(keyed(`ref_${index}`, `t${index}`), 5);
    metrics.observe(callRecord("ref_unkeyed", undefined), 5);
    const { body } = await metrics.render();
    const teams = new Set(
      body
        .split("\n")
        .filter((line) => line.startsWith("promptgate_calls_total{"))
        .map((line) => /team="([^"]*)"/.exec(line)?.[1]),
    );
    expect(teams.size).toBe(maxTeamLabels + 2);
    expect(teams.has("other")).toBe(true);
    expect(teams.has("none")).toBe(true);
    expect(teams.has(`t${maxTeamLabels}`)).toBe(false);
    expect(body).toMatch(/promptgate_calls_total\{[^}]*team="other"[^}]*\} 20/);
  });
});

describe("the call's span", () => {
  it("carries the named key's id, name and team", () => {
    expect(spanOf(keyed("ref_1")).attributes).toMatchObject({
      "promptgate.key.id": key.id,
      "promptgate.key.name": key.name,
      "promptgate.key.team": key.team,
    });
  });

  it("leaves the team out for a key without one, and every key attribute for a call without a key", () => {
    const teamless = spanOf(keyed("ref_2", null)).attributes;
    expect(teamless["promptgate.key.id"]).toBe(key.id);
    expect(teamless).not.toHaveProperty("promptgate.key.team");
    const unkeyed = spanOf(callRecord("ref_3", undefined)).attributes;
    expect(Object.keys(unkeyed).filter((name) => name.startsWith("promptgate.key."))).toEqual([]);
  });
});
