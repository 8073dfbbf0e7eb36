import { fakeDocument } from "./fake-document.js";

/** What kind of answer a request asked for, read from its provider's response-format fields. */
export type AnswerFormat =
  | { kind: "text" }
  | { kind: "json-object" }
  | { kind: "json-schema"; schema: unknown }
  /** Gemini's `text/x.enum`: one value of the schema's enum, as bare text rather than JSON. */
  | { kind: "enum-text"; schema: unknown };

/** Every plain-text answer starts with this label, so nobody mistakes it for a model's words. */
export const simulatedAnswerPrefix = "[promptgate simulated provider] ";

/** The most code points of user text that an answer echoes. */
export const maxEchoLength = 200;

/** What a simulated answer is made from. */
export interface AnswerInput {
  lastUserText: string;
  format: AnswerFormat;
  /** Seeds the faker; derived from the request digest so equal requests get equal answers. */
  seed: number;
}

/**
 * The answer text: the label plus an echo of the last user text, or for a schema request
 * compact JSON faked from the schema, or for plain JSON mode a small labelled JSON object. A schema
 * the faker cannot serve within its budget gets that labelled object too, at once.
 */
export function simulatedAnswer({ lastUserText, format, seed }: AnswerInput): string {
  if (format.kind === "json-schema") return fakeDocument(format.schema, seed) ?? jsonObjectAnswer(lastUserText);
  if (format.kind === "enum-text") return bareString(fakeDocument(format.schema, seed)) ?? echo(lastUserText);
  if (format.kind === "json-object") return jsonObjectAnswer(lastUserText);
  return simulatedAnswerPrefix + echo(lastUserText);
}

/** The last user text with whitespace collapsed, cut to `maxEchoLength` code points. */
export function echo(text: string): string {
  const collapsed = text.replace(/\s+/g, " ").trim();
  if (collapsed === "") return "(no user text)";
  const codePoints = Array.from(collapsed);
  if (codePoints.length <= maxEchoLength) return collapsed;
  return `${codePoints.slice(0, maxEchoLength - 1).join("")}…`;
}

function jsonObjectAnswer(lastUserText: string): string {
  return JSON.stringify({ promptgate_simulated: true, echo: echo(lastUserText) });
}

/** The string a faked JSON document holds, without its quotes; `undefined` if it holds no string. */
function bareString(document: string | undefined): string | undefined {
  if (document === undefined) return undefined;
  const value: unknown = JSON.parse(document);
  return typeof value === "string" ? value : undefined;
}
