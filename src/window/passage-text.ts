/**
 * A chunk's text and reference as a context block carries them, so that no chunk can forge the block's structure.
 * A passage is its header line `[label n: reference]`, its text, and the `---` line between passages; a retrieved
 * text holding a rule line or a bracketed line would read as a boundary or as a second header. Such lines are
 * escaped as Markdown escapes them, a backslash before their first mark (`\---`, `\[Quelle 2: …]`), which a model
 * still reads as the text it was; every other line is left exactly as it was.
 */

/** Every line break a reader (or a model's tokenizer) may take as one: CR LF, LF, CR, VT, FF, NEL, LS, PS. */
const lineBreak = /(\r\n|[\n\r\v\f\u0085\u2028\u2029])/;

/** Blanks within a line: space, tab and the other Unicode spaces. */
const blank = "[\\t \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\ufeff]";

/** A thematic break as Markdown knows it, however indented: three or more of one of `-`, `*`, `_`, with blanks. */
const rule = new RegExp(`^${blank}*([-*_])(?:${blank}*\\1){2,}${blank}*$`);

/** A line that opens with a bracket, as a header does. */
const bracketed = new RegExp(`^${blank}*\\[`);

/** Where a line's first mark stands, after its blanks. */
const firstMark = new RegExp(`^${blank}*`);

/** The text as a passage carries it: rule lines and lines opening with `[` escaped with a backslash, nothing else. */
export function passageText(text: string): string {
  return text
    .split(lineBreak)
    .map((part, position) => {
      // Odd places hold the line breaks the split kept.
      if (position % 2 === 1 || !(rule.test(part) || bracketed.test(part))) return part;
      const indent = firstMark.exec(part)?.[0].length ?? 0;
      return `${part.slice(0, indent)}\\${part.slice(indent)}`;
    })
    .join("");
}

/** A header's part (its label, a source, a page) on one line: any line break in it becomes a space. */
export function oneLine(reference: string): string {
  return reference.replace(new RegExp(lineBreak.source, "g"), " ");
}
