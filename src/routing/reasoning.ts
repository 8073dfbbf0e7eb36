import { invalidRequest } from "../errors/gateway-error.js";
import type { RequestedReasoning } from "../surfaces/requested-reasoning.js";
import { type ReasoningLevel, reasoningLevels } from "../surfaces/translation.js";
import type { ModelEntry } from "./model-table.js";

/**
 * The reasoning level of a call, checked: it must be in the gateway's allowlist and among the levels
 * the model's table entry supports; otherwise INVALID_REQUEST naming the field, the level and the accepted ones.
 * Undefined when the call asks for no level.
 */
export function checkedReasoning(
  requested: RequestedReasoning | undefined,
  entry: ModelEntry,
): ReasoningLevel | undefined {
  if (requested === undefined) return undefined;
  const accepted = acceptedLevels(entry);
  const level = accepted.find((candidate) => candidate === requested.level);
  if (level !== undefined) return level;
  // A short lowercase word is a level's name and safe to repeat; anything else is not repeated.
  const shown = /^[a-z0-9_-]{1,20}$/.test(requested.level) ? `"${requested.level}"` : "this value";
  const known = reasoningLevels.some((candidate) => candidate === requested.level);
  throw invalidRequest(
    `'${requested.param}' = ${shown} is not a reasoning level ${known ? "this model supports" : "the gateway accepts"}; use one of ${accepted.join(", ")}, or leave it out. Nothing was sent.`,
    requested.param,
  );
}

/** The gateway's allowlist intersected with the model's supported levels, in the allowlist's order. */
export function acceptedLevels(entry: ModelEntry): ReasoningLevel[] {
  return reasoningLevels.filter((level) => entry.reasoning === undefined || entry.reasoning.includes(level));
}
