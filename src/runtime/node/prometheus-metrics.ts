import { collectDefaultMetrics, Registry } from "prom-client";
import type { PromptSize } from "../../errors/prompt-size.js";
import { teamPattern } from "../../keys/key-settings.js";
import {
  type CallMetrics,
  policyLabel,
  refusingCheck,
  refusingWindow,
  validationOutcome,
} from "../../record/call-metrics.js";
import type { CallRecord } from "../../record/call-record.js";
import type { ModelTable } from "../../routing/model-table.js";
import { operationOf } from "./gen-ai-span.js";
import { counterFamily, histogramFamily } from "./metric-families.js";

/** Sizes in code points, from a short call to a whole case interpretation. */
const charBuckets = [1_000, 2_500, 5_000, 10_000, 15_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];

/** A check's fill of its window: conservative total over limit, finest where a call nears the limit. */
const fillBuckets = [0.25, 0.5, 0.8, 0.9, 1, 1.25, 2];

/** Seconds a call takes, from a refusal before any provider call to a long answer. */
const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 960];

/** The most distinct teams the call metrics name in one process; the calls of any later team are `other`'s. */
export const maxTeamLabels = 100;

/**
 * The `team` label of a call: the team of its named key as the operator gave it (`none` without one), the first
 * `max` distinct teams a process sees by name and any later one as `other`. A team is an operator's label (the admin
 * API and `keys.toml` take only what `teamPattern` allows), never client text; one the pattern refuses is `other`.
 */
export function teamLabels(max = maxTeamLabels): (record: CallRecord) => string {
  const named = new Set<string>();
  return (record) => {
    const team = record.key?.team;
    if (team === undefined || team === null || team === "") return "none";
    if (named.has(team)) return team;
    if (named.size >= max || !teamPattern.test(team) || team === "none" || team === "other") return "other";
    named.add(team);
    return team;
  };
}

/**
 * The gateway's Prometheus metrics (prom-client), made from each call's record. Every label is bounded: a surface,
 * a provider (`simulated` or a configured origin), a policy name, a decision, an error code, a check, a validation
 * outcome, a model only when the model table names it (any other is `other`), the team of a named key (at most
 * `maxTeamLabels`, see `teamLabels`) and the name of a limit's window; never a case, a ref or a key.
 */
export function prometheusMetrics(options: { models: () => ModelTable; public: boolean }): CallMetrics & {
  registry: Registry;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const calls = counterFamily(registry, {
    name: "promptgate_calls_total",
    help: "Calls by surface, provider, policy, decision, the error code the client got (none: no error) and the team of the named key (none: no team).",
    labelNames: ["surface", "provider", "policy", "decision", "code", "team"],
  });
  const rejections = counterFamily(registry, {
    name: "promptgate_rejections_total",
    help: "Calls refused before any provider call, by the check that refused them, the code and the team of the named key.",
    labelNames: ["policy", "check", "code", "team"],
  });
  const limitRejections = counterFamily(registry, {
    name: "promptgate_limit_rejections_total",
    help: "Calls refused by a limit over time (RATE_LIMITED or BUDGET_EXHAUSTED), by the team of the named key and the window that refused them (the limit's name).",
    labelNames: ["team", "window"],
  });
  const totals = histogramFamily(registry, {
    name: "promptgate_prompt_total_chars",
    help: "Each check's total_chars of a measured call (code points).",
    labelNames: ["policy", "check"],
    buckets: charBuckets,
  });
  const fill = histogramFamily(registry, {
    name: "promptgate_window_fill_ratio",
    help: "Each check's conservative_total_chars over the policy's limit_chars: how full the window ran.",
    labelNames: ["policy", "check"],
    buckets: fillBuckets,
  });
  const prefixes = histogramFamily(registry, {
    name: "promptgate_cache_prefix_chars",
    help: "The provider check's cache_prefix_chars of calls that carry a cached prefix (code points).",
    labelNames: ["policy"],
    buckets: charBuckets,
  });
  const schemas = histogramFamily(registry, {
    name: "promptgate_schema_chars",
    help: "The preflight's schema_chars of calls with a response schema (code points).",
    labelNames: ["policy"],
    buckets: charBuckets,
  });
  const validations = counterFamily(registry, {
    name: "promptgate_validations_total",
    help: "Structured answers by validation outcome (valid, invalid, or repaired: valid once a policy's rule applied) and schema: a named one, or client.",
    labelNames: ["policy", "schema", "outcome"],
  });
  const durations = histogramFamily(registry, {
    name: "promptgate_call_duration_seconds",
    help: "Seconds from a call's arrival until its record was kept (a stream's: until its end).",
    labelNames: ["surface", "decision"],
    buckets: durationBuckets,
  });
  const firstBytes = histogramFamily(registry, {
    name: "promptgate_upstream_first_byte_seconds",
    help: "Seconds from a provider request until its answer's head arrived, by provider and model.",
    labelNames: ["provider", "model"],
    buckets: durationBuckets,
  });
  const added = histogramFamily(registry, {
    name: "promptgate_added_seconds",
    help: "The gateway's own time per call sent to a provider: its duration less the provider's, by surface.",
    labelNames: ["surface"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  });
  const operations = histogramFamily(registry, {
    name: "gen_ai_client_operation_duration_seconds",
    help: "OpenTelemetry GenAI (in development): seconds of each provider request, until its answer ended, by model.",
    labelNames: ["gen_ai_operation_name", "gen_ai_request_model", "promptgate_provider"],
    buckets: durationBuckets,
  });

  const tokens = histogramFamily(registry, {
    name: "gen_ai_client_token_usage",
    help: "OpenTelemetry GenAI (in development): tokens per call as the provider counted them, by token type.",
    labelNames: ["gen_ai_operation_name", "gen_ai_request_model", "gen_ai_token_type", "promptgate_provider"],
    buckets: [16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304],
  });

  const teamOf = teamLabels();
  // The names the model table lists, per table (a deploy or reload brings a new one).
  const listedNames = new WeakMap<ModelTable, ReadonlySet<string>>();
  const modelLabel = (model: string | undefined): string => {
    if (model === undefined) return "none";
    const table = options.models();
    let names = listedNames.get(table);
    if (names === undefined) {
      names = new Set(table.listed().map((entry) => entry.name));
      listedNames.set(table, names);
    }
    return names.has(model) ? model : "other";
  };
  const observeSize = (policy: string, size: PromptSize | undefined) => {
    if (size === undefined) return;
    totals(policy, size.check).observe(size.total_chars);
    if (size.limit_chars > 0) fill(policy, size.check).observe(size.conservative_total_chars / size.limit_chars);
  };

  return {
    registry,
    public: options.public,
    observe(record: CallRecord, durationMs: number) {
      const policy = policyLabel(record);
      const code = record.error ?? "none";
      const team = teamOf(record);
      calls(record.surface, record.provider, policy, record.decision, code, team).inc();
      if (record.decision === "rejected") rejections(policy, refusingCheck(record), code, team).inc();
      const window = refusingWindow(record);
      if (window !== undefined) limitRejections(team, window).inc();
      observeSize(policy, record.preflight);
      observeSize(policy, record.provider_check);
      const prefix = record.provider_check?.cache_prefix_chars ?? 0;
      if (prefix > 0) prefixes(policy).observe(prefix);
      const schema = record.preflight?.schema_chars ?? 0;
      if (schema > 0) schemas(policy).observe(schema);
      const outcome = validationOutcome(record);
      if (outcome !== undefined) validations(policy, record.schema ?? "client", outcome).inc();
      durations(record.surface, record.decision).observe(durationMs / 1000);
      const timing = record.upstream_timing;
      if (timing === undefined) return;
      const model = modelLabel(record.model);
      firstBytes(record.provider, model).observe(timing.first_byte_ms / 1000);
      if (timing.total_ms === undefined) return;
      added(record.surface).observe(Math.max(0, durationMs - timing.total_ms) / 1000);
      const operation = operationOf(record);
      operations(operation, model, record.provider).observe(timing.total_ms / 1000);
      const usage = record.usage;
      if (usage?.input_tokens !== undefined)
        tokens(operation, model, "input", record.provider).observe(usage.input_tokens);
      if (usage?.output_tokens !== undefined) {
        tokens(operation, model, "output", record.provider).observe(usage.output_tokens);
      }
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
