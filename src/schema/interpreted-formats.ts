import { format as checks } from "@cfworker/json-schema";
import type { Format } from "ajv";
import { fullFormats } from "ajv-formats/dist/formats.js";

// The interpretive validator checks `format` with a table of its own, which differs from ajv-formats (its
// `date-time` takes a time without zone, its `email` is looser, it knows no `byte`). The answer must be valid or
// invalid alike on Node and Workers, so its table is made ajv-formats' own (formats.js is the plain table: no Ajv).

let aligned = false;

/** Makes the interpretive validator check exactly ajv-formats' string formats, as Ajv does on Node. Idempotent. */
export function alignFormats(): void {
  if (aligned) return;
  for (const name of Object.keys(checks)) delete checks[name as keyof typeof checks];
  for (const [name, definition] of Object.entries(fullFormats)) {
    const check = stringCheck(definition);
    if (check !== undefined) Object.assign(checks, { [name]: check });
  }
  aligned = true;
}

/** How a string is checked against a format, or undefined where ajv-formats checks no strings (numbers, `true`). */
function stringCheck(definition: Format): ((value: string) => boolean) | undefined {
  if (definition instanceof RegExp) return (value) => definition.test(value);
  if (typeof definition === "function") return (value) => Boolean(definition(value));
  if (typeof definition !== "object" || (definition.type !== undefined && definition.type !== "string")) {
    return undefined;
  }
  const { validate } = definition;
  if (validate instanceof RegExp) return (value) => validate.test(value);
  // A format of strings: its function takes strings (ajv-formats has no asynchronous ones).
  const check = validate as (value: string) => unknown;
  return typeof check === "function" ? (value) => Boolean(check(value)) : undefined;
}

/**
 * The checks of ajv-formats' number formats, as JSON Schema the interpretive validator can apply (it checks formats
 * of strings only): `int32` a 32-bit integer, `int64` any integer (JSON numbers end at 2^53); `float` and `double`
 * take every number.
 */
export const numberFormats: ReadonlyMap<string, Record<string, unknown>> = new Map([
  ["int32", { type: "integer", minimum: -(2 ** 31), maximum: 2 ** 31 - 1 }],
  ["int64", { type: "integer" }],
]);
