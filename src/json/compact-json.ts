/** A structured value's compact JSON and its code points, once known. */
export interface CompactForm {
  text: string;
  /** Its code points, filled in by the first count. */
  chars: number | undefined;
}

/**
 * Compact forms by object. Parsed JSON is never changed in place here (every transform
 * copies), so one object's compact JSON stays what it was: a call that asks for it several
 * times (preflight, provider check, de-duplication, validator key) builds it once.
 */
const compactForms = new WeakMap<object, CompactForm>();

/** The compact form of a value, remembered for objects. */
export function compactForm(value: unknown): CompactForm {
  if (typeof value !== "object" || value === null) return { text: JSON.stringify(value) ?? "", chars: undefined };
  let form = compactForms.get(value);
  if (form === undefined) {
    form = { text: JSON.stringify(value) ?? "", chars: undefined };
    compactForms.set(value, form);
  }
  return form;
}

/** Compact JSON of a value; `undefined` becomes the empty string. */
export function compactJson(value: unknown): string {
  return compactForm(value).text;
}
