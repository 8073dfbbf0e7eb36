import { validationOutcome } from "../../record/call-metrics.js";
import type { CallRecord } from "../../record/call-record.js";
import type { SpanValue } from "../../record/call-tracing.js";
import type { GenAiOperation } from "../../surfaces/surface.js";
import { surfaces } from "../../surfaces/surfaces.js";

const genAiNames = new Map(surfaces.map((surface) => [surface.name, surface.genAi]));

/** The GenAI operation of a call's route, as its surface names it (`chat`, `generate_content`, else `other`). */
export function operationOf(record: CallRecord): GenAiOperation {
  return genAiNames.get(record.surface)?.operation(record.route) ?? "other";
}

/**
 * A call's span name and attributes after the OpenTelemetry GenAI conventions (still in development), plus
 * `promptgate.*` for the policy, the decision, both checks' totals, the validation outcome and the named key (its
 * id, name and team, where it has one). Only ids, names, sizes and outcomes: never a prompt, an answer or a secret.
 */
export function spanOf(record: CallRecord): { name: string; attributes: Record<string, SpanValue> } {
  const operation = operationOf(record);
  const attributes: Record<string, SpanValue> = {
    "gen_ai.operation.name": operation,
    "gen_ai.provider.name": genAiNames.get(record.surface)?.provider ?? record.surface,
    "promptgate.ref": record.ref,
    "promptgate.surface": record.surface,
    "promptgate.decision": record.decision,
    "promptgate.provider": record.provider,
  };
  const set = (key: string, value: SpanValue | undefined) => {
    if (value !== undefined) attributes[key] = value;
  };
  set("gen_ai.request.model", record.model);
  set("gen_ai.response.model", record.upstream_model ?? (record.decision === "sent" ? record.model : undefined));
  set("gen_ai.response.id", record.response_id);
  set("gen_ai.response.finish_reasons", record.finish_reasons);
  set("gen_ai.usage.input_tokens", record.usage?.input_tokens);
  set("gen_ai.usage.output_tokens", record.usage?.output_tokens);
  set("error.type", record.error);
  set("http.response.status_code", record.upstream_status);
  set("promptgate.policy", record.policy);
  set("promptgate.preflight.total_chars", record.preflight?.total_chars);
  set("promptgate.preflight.conservative_total_chars", record.preflight?.conservative_total_chars);
  set("promptgate.provider_check.total_chars", record.provider_check?.total_chars);
  set("promptgate.provider_check.conservative_total_chars", record.provider_check?.conservative_total_chars);
  set("promptgate.limit_chars", (record.provider_check ?? record.preflight)?.limit_chars);
  set("promptgate.validation", validationOutcome(record));
  set("promptgate.schema", record.schema);
  set("promptgate.call_label", record.call_label);
  set("promptgate.case", record.case);
  set("promptgate.key.id", record.key?.id);
  set("promptgate.key.name", record.key?.name);
  set("promptgate.key.team", record.key?.team ?? undefined);
  return { name: record.model === undefined ? operation : `${operation} ${record.model}`, attributes };
}
