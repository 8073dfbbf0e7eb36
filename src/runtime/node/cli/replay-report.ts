import type { PromptSize } from "../../../errors/prompt-size.js";
import { withinWindow } from "../../../window/check.js";
import type { RequestReport } from "./replay-request.js";

/** What the aggregate reads of one replayed request. */
export type MeasuredRequest = Pick<RequestReport, "surface" | "prompt_size" | "provider_prompt_size">;

/** One policy's replayed requests. */
export interface PolicyRequests {
  /** The resolved policy version, `name@` + 12 hex digits. */
  policy: string;
  requests: readonly MeasuredRequest[];
}

/** The figures of one window check over the requests it measured. */
export interface CheckFigures {
  /** What `min`, `median` and `max` are of: the figure the check compares with the limit (`withinWindow`). */
  figure: "conservative_total_chars";
  /** How many requests the check measured; every figure below is over these. */
  measured: number;
  /** Null when the check measured none. */
  min: number | null;
  /** The lower of the two middle values when `measured` is even; null when it is 0. */
  median: number | null;
  max: number | null;
  /** How many are not `over_target`: `total_chars <= target_chars`, the gateway's comparison, without the reserve. */
  under_target: number;
  /** How many are inside the window, `conservative_total_chars <= limit_chars`: not refused by the check for size. */
  under_limit: number;
}

/** The aggregate (`--report`) of one policy's replay on one surface. */
export interface ReplayAggregate {
  policy: string;
  /** Null for stored entries that name no known surface (all of them unmeasured). */
  surface: string | null;
  count: number;
  /** Refused before the preflight measured them (an invalid body, an unknown route or schema): in no figure. */
  unmeasured: number;
  /** The policy's target and limit, as its measurements state them; null when nothing was measured. */
  target_chars: number | null;
  limit_chars: number | null;
  preflight: CheckFigures;
  /** Over the requests the provider check measured: not those the preflight refused, nor count routes. */
  provider: CheckFigures;
}

/**
 * Aggregates replayed requests per policy and surface, in the order the policies are given and
 * each policy's surfaces first appear: for each check, min, median and max of the figure it compares
 * with the limit, and how many requests stay under the target and under the limit.
 */
export function aggregateReplay(runs: readonly PolicyRequests[]): ReplayAggregate[] {
  return runs.flatMap(({ policy, requests }) =>
    [...groupBySurface(requests)].map(([surface, group]) => aggregateGroup(policy, surface, group)),
  );
}

function groupBySurface(requests: readonly MeasuredRequest[]): Map<string | null, MeasuredRequest[]> {
  const groups = new Map<string | null, MeasuredRequest[]>();
  for (const request of requests) {
    const group = groups.get(request.surface);
    if (group === undefined) groups.set(request.surface, [request]);
    else group.push(request);
  }
  return groups;
}

function aggregateGroup(policy: string, surface: string | null, requests: MeasuredRequest[]): ReplayAggregate {
  const preflight = measuredSizes(requests.map((request) => request.prompt_size));
  const provider = measuredSizes(requests.map((request) => request.provider_prompt_size));
  return {
    policy,
    surface,
    count: requests.length,
    unmeasured: requests.length - preflight.length,
    target_chars: preflight[0]?.target_chars ?? null,
    limit_chars: preflight[0]?.limit_chars ?? null,
    preflight: figuresOf(preflight),
    provider: figuresOf(provider),
  };
}

function measuredSizes(sizes: ReadonlyArray<PromptSize | null>): PromptSize[] {
  return sizes.filter((size) => size !== null);
}

function figuresOf(sizes: readonly PromptSize[]): CheckFigures {
  const figures = sizes.map((size) => size.conservative_total_chars).sort((a, b) => a - b);
  return {
    figure: "conservative_total_chars",
    measured: figures.length,
    min: figures[0] ?? null,
    median: figures[Math.floor((figures.length - 1) / 2)] ?? null,
    max: figures.at(-1) ?? null,
    under_target: sizes.filter((size) => !size.over_target).length,
    under_limit: sizes.filter(withinWindow).length,
  };
}
