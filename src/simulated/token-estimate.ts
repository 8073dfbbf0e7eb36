import { isJsonObject } from "./json-value.js";

/** Keys whose string values are labels of the wire format rather than prompt text. */
const labelKeys = new Set(["role", "type"]);

/** The stated estimate of every simulated token count: one token per started 4 code points. */
export function estimateTokens(text: string): number {
  return Math.ceil(Array.from(text).length / 4);
}

/** Estimates the tokens of a prompt: every string inside `values`, except roles and type labels. */
export function estimatePromptTokens(...values: unknown[]): number {
  const texts: string[] = [];
  for (const value of values) collectStrings(value, texts);
  return estimateTokens(texts.join(""));
}

function collectStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into);
  else if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) if (!labelKeys.has(key)) collectStrings(item, into);
  }
}
