/** The `prompt_size` object of contract section 3. */
export interface PromptSize {
  check: "preflight" | "provider";
  system_chars: number;
  message_chars: number;
  tool_chars: number;
  schema_chars: number;
  /** Every other field the model may read: ids, names, unknown fields, as compact JSON of key and value. */
  other_chars: number;
  cache_prefix_chars: number;
  media_parts: number;
  /** The policy's cap on media parts, when it sets one. */
  media_parts_limit?: number;
  schema_deduplicated: boolean;
  total_chars: number;
  reserve_chars: number;
  conservative_total_chars: number;
  target_chars: number;
  limit_chars: number;
  over_target: boolean;
  policy: string;
  /** Present and true when the cached prefix was estimated from a token count. */
  cache_prefix_estimated?: boolean;
}
