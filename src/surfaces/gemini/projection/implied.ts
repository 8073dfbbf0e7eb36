import { canonicalJson } from "../../../json/canonical-json.js";
import type { Projected, Shape } from "./shape-types.js";
import { typeAccepts } from "./values.js";

/**
 * Whether `loose` says nothing that `strict` does not already say, so that their intersection is
 * `strict` itself, reference tag included: `loose` holds at most types, an enum, `required` and
 * properties, each of which `strict` (every alternative of it) implies. This keeps a reference
 * (say a tool's `$ref` in a `oneOf`) a reference when the keywords beside it (a shared `type` and
 * `kind`) repeat what its definition says.
 */
export function impliedBy(loose: Shape, strict: Shape): boolean {
  if (strict.anyOf !== undefined) return strict.anyOf.every((alternative) => impliedBy(loose, alternative));
  for (const key of Object.keys(loose) as Array<keyof Shape>) {
    if (!impliableKeys.has(key)) return false;
  }
  if (loose.types !== undefined) {
    const allowed = loose.types;
    if (strict.types === undefined || !strict.types.every((type) => typeAccepts(allowed, type))) return false;
  }
  if (loose.enum !== undefined) {
    const allowed = new Set(loose.enum.map(canonicalJson));
    if (strict.enum === undefined || !strict.enum.every((value) => allowed.has(canonicalJson(value)))) return false;
  }
  if (loose.required !== undefined && !loose.required.every((name) => strict.required?.includes(name))) return false;
  for (const [name, property] of loose.properties ?? []) {
    if (!propertyImplied(property, strict, name)) return false;
  }
  return true;
}

/** The members `impliedBy` can compare; a description of `loose` is kept by the caller. */
const impliableKeys: ReadonlySet<keyof Shape> = new Set([
  "origin",
  "description",
  "types",
  "enum",
  "required",
  "properties",
]);

function propertyImplied(loose: Projected, strict: Shape, name: string): boolean {
  // Properties only constrain objects.
  if (strict.types !== undefined && !strict.types.includes("object")) return true;
  const declared = strict.properties?.get(name) ?? strict.additional ?? { origin: strict.origin };
  if (declared === false) return true;
  if (loose === false) return false;
  // A nested description would be lost, so it must be the declared one.
  if (loose.description !== undefined && loose.description !== declared.description) return false;
  return impliedBy(loose, declared);
}
