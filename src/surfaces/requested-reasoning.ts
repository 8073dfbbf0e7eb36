import { type ReasoningLevel, reasoningLevels } from "./translation.js";

/** The reasoning level a request asks for, as it wrote it, and the field that holds it. */
export interface RequestedReasoning {
  /** The level's name (a provider's own setting already read as a level where it has another form). */
  level: string;
  /** The request field, as a path of field names. */
  param: string;
}

/**
 * The level a provider's own thinking budget asks for, by the provider's table of budgets per level: 0 (or none)
 * is `none`, a budget the level of the smallest budget that holds it, -1 (a budget left to the model) `max`. A
 * budget above the table's largest is no level (`budget over max`), which the allowlist refuses.
 */
export function levelOfBudget(budgets: Readonly<Record<ReasoningLevel, number | undefined>>, budget: number): string {
  if (budget === 0) return "none";
  if (budget === -1) return "max";
  for (const level of reasoningLevels) {
    const limit = budgets[level];
    if (level !== "none" && limit !== undefined && budget <= limit) return level;
  }
  return "budget over max";
}
