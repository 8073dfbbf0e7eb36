/** A parsed JSON object, read field by field with the guards below. */
export type JsonObject = Record<string, unknown>;

/** Whether a parsed JSON value is an object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value is a string with at least one character. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

/** The `text` members of a list of content parts, in order; non-text parts are skipped. */
export function textOfParts(parts: unknown, textType: string | undefined): string[] {
  if (!Array.isArray(parts)) return [];
  const texts: string[] = [];
  for (const part of parts) {
    if (!isJsonObject(part) || typeof part.text !== "string") continue;
    if (textType !== undefined && part.type !== textType) continue;
    texts.push(part.text);
  }
  return texts;
}

/**
 * Text of the last user turn of a conversation that has text: a plain string as it is; else of the
 * turns whose role is `user` (or absent) and that are messages (no `type`, or `message`), the last
 * one's string content or text parts joined. A turn with no text (a tool's result) is passed over.
 */
export function lastUserText(turns: unknown, contentKey: string, textType: string | undefined): string {
  if (typeof turns === "string") return turns;
  if (!Array.isArray(turns)) return "";
  for (let index = turns.length - 1; index >= 0; index--) {
    const turn: unknown = turns[index];
    if (!isJsonObject(turn) || (turn.role !== undefined && turn.role !== "user")) continue;
    if (turn.type !== undefined && turn.type !== "message") continue;
    const content = turn[contentKey];
    const text = typeof content === "string" ? content : textOfParts(content, textType).join(" ");
    if (text !== "") return text;
  }
  return "";
}

/** The last turn of a conversation, if it is an object. */
export function lastTurn(turns: unknown): JsonObject | undefined {
  const last: unknown = Array.isArray(turns) ? turns.at(-1) : undefined;
  return isJsonObject(last) ? last : undefined;
}
