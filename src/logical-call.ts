/**
 * The one shape every surface produces from its wire body and every later step reads.
 * A leaf module: it imports nothing, so no dependency arrow runs back up to it.
 */

/** A reference to input the provider already holds and the request only names. */
export interface CachedPrefixReference {
  /** What kind of stored prefix it is, e.g. a Gemini cached content or a stored response. */
  kind: "cached-content" | "previous-response" | "conversation";
  /** The provider's id of the stored prefix. */
  id: string;
}

/**
 * How many leading entries of `tools`, `system` and `messages` a cache breakpoint in the
 * request itself marks as its cached prefix (e.g. Anthropic `cache_control`): they are
 * reported as `cache_prefix_chars` instead of in their own category, never twice.
 */
export interface InlinePrefix {
  tools: number;
  system: number;
  messages: number;
}

/** The logical input of one call, as the model sees it, independent of the wire format. */
export interface LogicalCall {
  /** The requested model, when the wire body or URL names one. */
  model: string | undefined;
  /** Whether the client asked for a streamed answer. */
  stream: boolean;
  /** System text: system/developer messages, instructions, systemInstruction, system. */
  system: string[];
  /** Message text parts, tool calls and tool results (structured ones as compact JSON). */
  messages: string[];
  /** Tool or function declarations; measured as compact JSON. */
  tools: unknown[];
  /** The response schema as transported natively, if any; measured as compact JSON. */
  responseSchema: unknown;
  /** Images, audio, files: not characters, counted separately. */
  mediaParts: number;
  /** A cached prefix the request refers to without carrying it. */
  cachedPrefix: CachedPrefixReference | undefined;
  /** The part of the request a breakpoint marks as cached, if any. */
  inlinePrefix: InlinePrefix | undefined;
}

/** An empty logical call, the starting point of every surface parser. */
export function emptyCall(): LogicalCall {
  return {
    model: undefined,
    stream: false,
    system: [],
    messages: [],
    tools: [],
    responseSchema: undefined,
    mediaParts: 0,
    cachedPrefix: undefined,
    inlinePrefix: undefined,
  };
}
