import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { PromptSize } from "../../src/errors/prompt-size.js";
import type { ComparisonReport, ReplayReport } from "../../src/runtime/node/cli/replay.js";
import { replayCommand } from "../../src/runtime/node/cli/replay-command.js";
import {
  aggregateReplay,
  type MeasuredRequest,
  type ReplayAggregate,
} from "../../src/runtime/node/cli/replay-report.js";
import { capture } from "../support/captured-io.js";

/** A policy's window, as a measurement states it. */
interface PolicyWindow {
  policy: string;
  target: number;
  limit: number;
  reserve: number;
}

const bounded: PolicyWindow = { policy: "bounded@000000000000", target: 10_000, limit: 20_000, reserve: 1_500 };
const wide: PolicyWindow = { policy: "wide@111111111111", target: 100_000, limit: 1_000_000, reserve: 0 };

/** A measurement of `total` characters of message, as the gateway's `measure` would state it. */
function size(check: PromptSize["check"], total: number, window: PolicyWindow): PromptSize {
  const reserve = check === "preflight" ? window.reserve : 0;
  return {
    check,
    system_chars: 0,
    message_chars: total,
    tool_chars: 0,
    schema_chars: 0,
    other_chars: 0,
    cache_prefix_chars: 0,
    media_parts: 0,
    schema_deduplicated: false,
    total_chars: total,
    reserve_chars: reserve,
    conservative_total_chars: total + reserve,
    target_chars: window.target,
    limit_chars: window.limit,
    over_target: total > window.target,
    policy: window.policy,
  };
}

/** A replayed request: measured by the preflight and the provider check, or by fewer (null: not measured). */
function request(
  surface: string | null,
  preflight: number | null,
  provider: number | null,
  window: PolicyWindow = bounded,
): MeasuredRequest {
  return {
    surface,
    prompt_size: preflight === null ? null : size("preflight", preflight, window),
    provider_prompt_size: provider === null ? null : size("provider", provider, window),
  };
}

describe("aggregateReplay", () => {
  it("gives min, median and max of the figure each check compares with the limit, and the counts under target and limit", () => {
    const [openai] = aggregateReplay([
      {
        policy: bounded.policy,
        requests: [
          request("openai", 12_000, 12_000),
          request("openai", 3_000, 3_000),
          // Rejected by the preflight (21,000 + 1,500 > 20,000): the provider check never ran.
          request("openai", 21_000, null),
          request("openai", 8_000, 8_000),
          request("openai", 15_000, 15_000),
        ],
      },
    ]);
    expect(openai).toEqual({
      policy: bounded.policy,
      surface: "openai",
      count: 5,
      unmeasured: 0,
      target_chars: 10_000,
      limit_chars: 20_000,
      // With the 1,500 reserve: 4,500, 9,500, 13,500, 16,500, 22,500.
      preflight: {
        figure: "conservative_total_chars",
        measured: 5,
        min: 4_500,
        median: 13_500,
        max: 22_500,
        under_target: 2,
        under_limit: 4,
      },
      // Without a reserve: 3,000, 8,000, 12,000, 15,000; the lower middle of four is 8,000.
      provider: {
        figure: "conservative_total_chars",
        measured: 4,
        min: 3_000,
        median: 8_000,
        max: 15_000,
        under_target: 2,
        under_limit: 4,
      },
    });
  });

  it("compares the target with total_chars, without the reserve, and counts both boundaries as under", () => {
    const [group] = aggregateReplay([
      {
        policy: bounded.policy,
        // 9,900 is under the target though 11,400 with the reserve; 18,500 + 1,500 is exactly the limit.
        requests: [request("gemini", 9_900, 9_900), request("gemini", 10_000, 10_000), request("gemini", 18_500, null)],
      },
    ]);
    expect(group?.preflight).toMatchObject({
      min: 11_400,
      median: 11_500,
      max: 20_000,
      under_target: 2,
      under_limit: 3,
    });
    const [over] = aggregateReplay([{ policy: bounded.policy, requests: [request("gemini", 18_501, null)] }]);
    expect(over?.preflight).toMatchObject({ under_target: 0, under_limit: 0 });
  });

  it("counts requests that were never measured apart, in no figure, and states null figures for a check that measured none", () => {
    const [group] = aggregateReplay([
      {
        policy: bounded.policy,
        requests: [
          request("anthropic", null, null),
          request("anthropic", 2_000, null),
          request("anthropic", null, null),
        ],
      },
    ]);
    expect(group).toEqual({
      policy: bounded.policy,
      surface: "anthropic",
      count: 3,
      unmeasured: 2,
      target_chars: 10_000,
      limit_chars: 20_000,
      preflight: {
        figure: "conservative_total_chars",
        measured: 1,
        min: 3_500,
        median: 3_500,
        max: 3_500,
        under_target: 1,
        under_limit: 1,
      },
      provider: {
        figure: "conservative_total_chars",
        measured: 0,
        min: null,
        median: null,
        max: null,
        under_target: 0,
        under_limit: 0,
      },
    });
  });

  it("groups by surface in the order surfaces first appear, entries of no known surface under null", () => {
    const groups = aggregateReplay([
      {
        policy: bounded.policy,
        requests: [
          request("gemini", 1_000, 1_000),
          request("openai", 2_000, 2_000),
          request(null, null, null),
          request("gemini", 3_000, 3_000),
        ],
      },
    ]);
    expect(groups.map(({ surface, count, unmeasured }) => ({ surface, count, unmeasured }))).toEqual([
      { surface: "gemini", count: 2, unmeasured: 0 },
      { surface: "openai", count: 1, unmeasured: 0 },
      { surface: null, count: 1, unmeasured: 1 },
    ]);
    expect(groups[0]?.provider).toMatchObject({ min: 1_000, median: 1_000, max: 3_000 });
    expect(groups[2]).toMatchObject({ target_chars: null, limit_chars: null, preflight: { measured: 0, min: null } });
  });

  it("groups by policy in the order the policies are given, each with its own window", () => {
    const groups = aggregateReplay([
      { policy: bounded.policy, requests: [request("openai", 25_000, null), request("openai", null, null)] },
      {
        policy: wide.policy,
        requests: [request("openai", 25_000, 25_000, wide), request("openai", 1_000, 1_000, wide)],
      },
    ]);
    expect(groups).toHaveLength(2);
    expect(groups[0]).toMatchObject({
      policy: bounded.policy,
      count: 2,
      unmeasured: 1,
      preflight: { measured: 1, min: 26_500, max: 26_500, under_target: 0, under_limit: 0 },
      provider: { measured: 0 },
    });
    expect(groups[1]).toMatchObject({
      policy: wide.policy,
      count: 2,
      unmeasured: 0,
      target_chars: 100_000,
      limit_chars: 1_000_000,
      preflight: { measured: 2, min: 1_000, median: 1_000, max: 25_000, under_target: 2, under_limit: 2 },
    });
  });

  it("gives nothing for no requests", () => {
    expect(aggregateReplay([])).toEqual([]);
    expect(aggregateReplay([{ policy: bounded.policy, requests: [] }])).toEqual([]);
  });
});

/**
 * The stored requests of test/fixtures/replay-report, sized around investigation.bounded's
 * window (target 10,000 on total_chars; limit 20,000 on total_chars plus the 1,500 reserve):
 *   chat-completions.json          OpenAI chat: 3,000; 12,000; 21,000 (over the limit)
 *   gemini-generate-content.jsonl  Gemini generateContent: 8,000; 15,000 (three turns)
 *   anthropic-messages.json        Anthropic messages: 5,000; 9,900; and one with a field
 *                                  the API does not know, refused under investigation.bounded
 */
const fixtures = ["chat-completions.json", "gemini-generate-content.jsonl", "anthropic-messages.json"].map((name) =>
  fileURLToPath(new URL(`../fixtures/replay-report/${name}`, import.meta.url)),
);

/** Runs `promptgate replay ARGS` in process; the JSON it printed, after checking it exited 0 and wrote no error. */
async function runReplay(args: string[]): Promise<unknown> {
  const output = capture();
  const code = await replayCommand(args, output.io);
  expect(output.stderr()).toBe("");
  expect(code).toBe(0);
  return JSON.parse(output.stdout());
}

/** Figures of one check recomputed from per-request sizes, written out here rather than by the module under test. */
function expectedFigures(sizes: PromptSize[]): Omit<ReplayAggregate["preflight"], "figure"> {
  const figures = sizes.map((size) => size.conservative_total_chars).sort((a, b) => a - b);
  return {
    measured: figures.length,
    min: figures.length === 0 ? null : figures[0]!,
    median: figures.length === 0 ? null : figures[Math.ceil(figures.length / 2) - 1]!,
    max: figures.length === 0 ? null : figures[figures.length - 1]!,
    under_target: sizes.filter((size) => size.total_chars <= size.target_chars).length,
    under_limit: sizes.filter((size) => size.conservative_total_chars <= size.limit_chars).length,
  };
}

/** Checks one policy's aggregate entries against that policy's per-request sizes. */
function expectAggregateOf(aggregate: ReplayAggregate[], policy: string, requests: MeasuredRequest[]): void {
  const surfaces = [...new Set(requests.map((entry) => entry.surface))];
  expect(aggregate.map((group) => group.surface)).toEqual(surfaces);
  for (const group of aggregate) {
    const ofSurface = requests.filter((entry) => entry.surface === group.surface);
    const preflight = ofSurface.flatMap((entry) => (entry.prompt_size === null ? [] : [entry.prompt_size]));
    const provider = ofSurface.flatMap((entry) =>
      entry.provider_prompt_size === null ? [] : [entry.provider_prompt_size],
    );
    expect(group).toMatchObject({
      policy,
      count: ofSurface.length,
      unmeasured: ofSurface.length - preflight.length,
      preflight: { figure: "conservative_total_chars", ...expectedFigures(preflight) },
      provider: { figure: "conservative_total_chars", ...expectedFigures(provider) },
    });
    for (const size of [...preflight, ...provider]) {
      expect(size.policy).toBe(policy);
      expect([size.target_chars, size.limit_chars]).toEqual([group.target_chars, group.limit_chars]);
    }
  }
}

describe("promptgate replay --report", () => {
  it("adds the aggregate per surface to the unchanged single-policy report, its figures those of the per-request results", async () => {
    const plain = (await runReplay(["--policy", "investigation.bounded", ...fixtures])) as ReplayReport;
    const report = (await runReplay(["--policy", "investigation.bounded", "--report", ...fixtures])) as ReplayReport;
    expect(Object.keys(plain)).toEqual(["policy", "files", "requests", "summary"]);
    expect(Object.keys(report)).toEqual(["policy", "files", "requests", "summary", "aggregate"]);
    const { aggregate, ...rest } = report;
    expect(rest).toEqual(plain);

    expect(report.requests.map((entry) => entry.error?.code ?? "ok")).toEqual([
      "ok",
      "ok",
      "INVESTIGATION_PROMPT_LIMIT",
      "ok",
      "ok",
      "ok",
      "ok",
      "INVALID_REQUEST",
    ]);
    expectAggregateOf(aggregate!, report.policy, report.requests);
    // The figures stated outright, as a design note would quote them.
    expect(
      aggregate!.map(({ surface, count, unmeasured, preflight }) => [surface, count, unmeasured, preflight]),
    ).toEqual([
      [
        "openai",
        3,
        0,
        expect.objectContaining({ min: 4_500, median: 13_500, max: 22_500, under_target: 1, under_limit: 2 }),
      ],
      [
        "gemini",
        2,
        0,
        expect.objectContaining({ min: 9_500, median: 9_500, max: 16_500, under_target: 1, under_limit: 2 }),
      ],
      [
        "anthropic",
        3,
        1,
        expect.objectContaining({ min: 6_500, median: 6_500, max: 11_400, under_target: 2, under_limit: 2 }),
      ],
    ]);
    expect(aggregate![0]?.provider).toMatchObject({ measured: 2, min: 3_000, max: 12_000, under_limit: 2 });
  });

  it("with --policy repeated, gives each request's result under every policy and the aggregate per policy and surface", async () => {
    const policies = ["investigation.bounded", "case.interpretation"];
    const report = (await runReplay([
      "--policy",
      policies[0]!,
      "--policy",
      policies[1]!,
      "--report",
      ...fixtures,
    ])) as ComparisonReport;
    expect(Object.keys(report)).toEqual(["policies", "files", "requests", "summaries", "aggregate"]);
    expect(report.policies.map((ref) => ref.split("@")[0])).toEqual(policies);
    expect(report.summaries.map((summary) => summary.policy)).toEqual(report.policies);

    // Each policy's results are exactly what a replay under that policy alone reports.
    for (const [position, name] of policies.entries()) {
      const alone = (await runReplay(["--policy", name, ...fixtures])) as ReplayReport;
      expect(report.requests.map((entry) => entry.results[position]?.policy)).toEqual(
        alone.requests.map(() => alone.policy),
      );
      expect(
        report.requests.map(({ results, ...origin }) => {
          const { policy, ...result } = results[position]!;
          return { ...origin, ...result };
        }),
      ).toEqual(alone.requests);
      expect(report.summaries[position]).toEqual({ policy: alone.policy, ...alone.summary });
    }

    for (const [position, policy] of report.policies.entries()) {
      const requests = report.requests.map(({ surface, results }) => ({ surface, ...results[position]! }));
      expectAggregateOf(
        report.aggregate!.filter((group) => group.policy === policy),
        policy,
        requests,
      );
    }
    expect(report.aggregate!.map((group) => group.policy)).toEqual([
      ...Array(3).fill(report.policies[0]),
      ...Array(3).fill(report.policies[1]),
    ]);
    // The unknown field is refused under investigation.bounded but counted under case.interpretation.
    const anthropic = report.aggregate!.filter((group) => group.surface === "anthropic");
    expect(anthropic.map((group) => group.unmeasured)).toEqual([1, 0]);
  });

  it("refuses the same policy version named twice as a usage error", async () => {
    const output = capture();
    const args = ["--policy", "investigation.bounded", "--policy", "investigation.bounded", ...fixtures];
    expect(await replayCommand(args, output.io)).toBe(2);
    expect(output.stderr()).toMatch(/--policy names investigation\.bounded@[0-9a-f]{12} more than once/);
    expect(output.stdout()).toBe("");
  });

  it("describes --report, its fields and its median in --help", async () => {
    const output = capture();
    expect(await replayCommand(["--help"], output.io)).toBe(0);
    const help = output.stdout();
    for (const text of [
      "--report",
      '"aggregate"',
      '"unmeasured"',
      "conservative_total_chars",
      '"under_target"',
      '"under_limit"',
      "lower of the two middle values",
      "[--policy NAME[@HASH]]...",
    ]) {
      expect(help).toContain(text);
    }
  });
});
