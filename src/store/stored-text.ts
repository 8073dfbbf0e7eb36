import type { SqlStatement, SqlValue } from "./sql-statement.js";

/**
 * What starts a text kept escaped: U+FFFF, a noncharacter, "permanently reserved for internal use", which every SQL
 * engine stores as it is.
 */
const mark = "\uFFFF";

/** `String.prototype.isWellFormed` (ES2024: Node 20 and workerd have it, the ES2023 types do not); fast on a long text. */
function wellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Whether a text holds U+0000 or a lone surrogate, or starts with the mark: what a database refuses, mangles or misreads. */
function unsafe(text: string): boolean {
  return text.includes("\0") || !wellFormed(text) || text.startsWith(mark);
}

/**
 * A text as a database keeps it. PostgreSQL refuses U+0000 in text, and every engine's UTF-8 turns a lone surrogate
 * into U+FFFD, so a model name or id with either would fail its insert or read back as another: such a text is kept
 * as the mark and its JSON (as a call record's JSON keeps it), which holds only characters every engine takes. Any
 * other text is kept as it is, as rows written before were. Equal texts are kept alike, so a lookup still matches.
 */
export function storedText(text: string): string {
  return unsafe(text) ? mark + JSON.stringify(text) : text;
}

/** The text `storedText` kept. */
export function textOfStored(stored: string): string {
  if (!stored.startsWith(mark)) return stored;
  try {
    const text: unknown = JSON.parse(stored.slice(mark.length));
    if (typeof text === "string") return text;
  } catch {
    // Not one this store escaped: a row kept before, as it was.
  }
  return stored;
}

/** The statement with every text parameter as `storedText` keeps it. */
export function storedStatement([sql, params]: SqlStatement): SqlStatement {
  return [sql, params.map((value: SqlValue) => (typeof value === "string" ? storedText(value) : value))];
}

/** The row with every text column as it was before `storedText` kept it. */
export function rowOfStored<Row>(row: Row): Row {
  if (row === null || typeof row !== "object") return row;
  const read: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    read[column] = typeof value === "string" ? textOfStored(value) : value;
  }
  return read as Row;
}
