const masked = "[quoted]";

/** The quotes providers put around the request values they object to; straight double quotes first. */
const quotePairs: ReadonlyArray<readonly [open: string, close: string]> = [
  ['"', '"'],
  ["`", "`"],
  ["“", "”"],
  ["‘", "’"],
  ["«", "»"],
  ["'", "'"],
];

const wordCharacter = /[\p{L}\p{N}_]/u;

/**
 * The text with every quoted part replaced by `[quoted]`: from the first opening quote of a kind to
 * the last closing one (so a value that itself holds that quote is masked whole), or to the end
 * where none closes. A straight single quote inside a word (`don't`, `provider's`) is an apostrophe,
 * not a quote. Masking too much is the safe side: a quoted part may be the caller's input.
 */
export function maskQuoted(text: string): string {
  let result = text;
  for (const [open, close] of quotePairs) {
    const start = openingQuote(result, open);
    if (start < 0) continue;
    const end = closingQuote(result, close, start + 1);
    result = `${result.slice(0, start)}${masked}${end < 0 ? "" : result.slice(end + 1)}`;
  }
  return result;
}

function openingQuote(text: string, open: string): number {
  for (let index = text.indexOf(open); index >= 0; index = text.indexOf(open, index + 1)) {
    if (open !== "'" || index === 0 || !wordCharacter.test(text.charAt(index - 1))) return index;
  }
  return -1;
}

function closingQuote(text: string, close: string, from: number): number {
  for (let index = text.lastIndexOf(close); index >= from; index = text.lastIndexOf(close, index - 1)) {
    if (close !== "'" || index === text.length - 1 || !wordCharacter.test(text.charAt(index + 1))) return index;
  }
  return -1;
}
