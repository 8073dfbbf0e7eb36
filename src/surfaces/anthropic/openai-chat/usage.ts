/** Anthropic's token counts, read from an answer or a stream, as Chat Completions usage. */

import type { CompletionUsage } from "openai/resources/completions";
import { isObject } from "../../../json/json-object.js";

/** Anthropic's token counts, as the stream or the answer report them. */
export interface TokenCounts {
  input: number;
  cacheRead: number;
  cacheCreation: number;
  output: number;
}

/** Reads the counts a usage object carries, keeping the others. */
export function readUsage(usage: unknown, into: TokenCounts): void {
  if (!isObject(usage)) return;
  if (typeof usage.input_tokens === "number") into.input = usage.input_tokens;
  if (typeof usage.cache_read_input_tokens === "number") into.cacheRead = usage.cache_read_input_tokens;
  if (typeof usage.cache_creation_input_tokens === "number") into.cacheCreation = usage.cache_creation_input_tokens;
  if (typeof usage.output_tokens === "number") into.output = usage.output_tokens;
}

/** Chat Completions usage: the prompt counts cached reads and cache writes too. */
export function usageOf(counts: TokenCounts): CompletionUsage {
  const prompt = counts.input + counts.cacheRead + counts.cacheCreation;
  return {
    prompt_tokens: prompt,
    completion_tokens: counts.output,
    total_tokens: prompt + counts.output,
    prompt_tokens_details: { cached_tokens: counts.cacheRead },
  };
}
