/**
 * The one shape every surface produces from its wire body and every later step reads.
 * A leaf module: it imports nothing, so no dependency arrow runs back up to it.
 */

/** A reference to input the provider already holds and the request only names. */
export interface CachedPrefixReference {
  /** What kind of stored prefix it is, e.g. a Gemini cached content or a stored response. */
  kind: "cached-content" | "previous-response";
  /** The provider's id of the stored prefix. */
  id: string;
}

/**
 * Content the model reads that the request names but does not carry, so the gateway cannot count
 * it: a prompt template, an item or conversation reference, a file id or remote URL of a document
 * that may be text, MCP servers and skills whose tools the provider expands.
 */
export interface UnmeasuredContent {
  /** The JSON path of the reference in the request body. */
  path: string;
  /** What it is, in a few words, for messages and the call record. */
  what: string;
}

/**
 * A field counted as the compact JSON of its key and value (`other_chars`): an id, a name, a
 * value outside its closed vocabulary, or a field the surface does not know at all (`unknown`).
 */
export interface OtherField {
  /** The JSON path of the field in the request body. */
  path: string;
  /** Code points of its compact JSON, key included. */
  chars: number;
  /** True when the surface does not know the field, which a policy may refuse. */
  unknown: boolean;
}

/**
 * How many leading entries of each list a cache breakpoint in the request itself marks as its
 * cached prefix (e.g. Anthropic `cache_control`): they are reported as `cache_prefix_chars`
 * instead of in their own category, never twice.
 */
export interface InlinePrefix {
  tools: number;
  system: number;
  messages: number;
  other: number;
}

/**
 * A text the gateway counted straight from the request's bytes (see src/json/tape.ts): its
 * code points are known, and its characters are decoded only if something reads them.
 */
export interface CountedText {
  readonly chars: number;
  readonly text: string;
  /** Whether the text holds the ASCII character `ascii`, told from its bytes where they can tell, without decoding it. */
  holds(ascii: string): boolean;
}

/** A text of a call: a string, or a text counted from the bytes. */
export type CallText = string | CountedText;

/** The characters of a call's text. */
export function textString(text: CallText): string {
  return typeof text === "string" ? text : text.text;
}

/** Whether a call's text holds the ASCII character `ascii`. */
export function textHolds(text: CallText, ascii: string): boolean {
  return typeof text === "string" ? text.includes(ascii) : text.holds(ascii);
}

/** The logical input of one call, as the model sees it, independent of the wire format. */
export interface LogicalCall {
  /** The requested model, when the wire body or URL names one. */
  model: string | undefined;
  /** Whether the client asked for a streamed answer. */
  stream: boolean;
  /** System text: system/developer messages, instructions, systemInstruction, system. */
  system: CallText[];
  /** Message text parts, names, tool calls and tool results (structured ones as compact JSON). */
  messages: CallText[];
  /** Tool or function declarations; measured as compact JSON. */
  tools: unknown[];
  /** The response schema as transported natively, if any; measured as compact JSON. */
  responseSchema: unknown;
  /** The name and description the native response format gives its schema. */
  schemaTexts: CallText[];
  /** Every other field the model may read, counted as compact JSON of key and value. */
  other: OtherField[];
  /** Binary media (images, audio, video, PDF): not characters, counted separately. */
  mediaParts: number;
  /** A cached prefix the request refers to without carrying it. */
  cachedPrefix: CachedPrefixReference | undefined;
  /** Content the model reads that the gateway cannot measure. */
  unmeasured: UnmeasuredContent[];
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
    schemaTexts: [],
    other: [],
    mediaParts: 0,
    cachedPrefix: undefined,
    unmeasured: [],
    inlinePrefix: undefined,
  };
}
