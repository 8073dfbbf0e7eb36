import { locate } from "./diagnose-path.js";
import { pointerTokens } from "./json-pointer.js";
import { isSchemaNode, type SchemaNode, schemaListKeywords, schemaMapKeywords } from "./schema-nodes.js";
import type { ValidatorError } from "./validator-error.js";

/**
 * Validators differ in what they count as evaluated once a subschema fails: Ajv counts every name a `properties`
 * declares and every `allOf` branch, valid or not; the interpretive validator, as the specification reads, only
 * what passed. So beside a failure, one of them may also report as "unevaluated" a property or item the other does
 * not. Such a report adds nothing (the failure that made it unevaluated is reported in its own right), and it is left
 * out for both validators alike, by a rule that reads only the schema, the answer and the other errors:
 * - `unevaluatedProperties` about a property that a schema applicable to the object declares (in `properties`,
 *   matched by `patternProperties`, or taken by `additionalProperties`), or a failure of such a property against an
 *   `unevaluatedProperties` schema, goes while another failure is reported at or below that object; one about an
 *   undeclared property always stays (every validator reports it);
 * - `unevaluatedItems` goes while another failure is reported at or below that array.
 */
export function withoutUnevaluatedEchoes(
  errors: readonly ValidatorError[],
  schema: unknown,
  answer: unknown,
): ValidatorError[] {
  const declared = new Map<string, (name: string) => boolean>();
  const declaresAt = (instancePath: string) => {
    let declares = declared.get(instancePath);
    if (declares === undefined) {
      const nodes = locate(schema, answer, pointerTokens(instancePath) ?? []).all;
      declares = (name) => nodes.some((node) => declaresProperty(node, name));
      declared.set(instancePath, declares);
    }
    return declares;
  };
  // The place (the object or array) an echo speaks of, or undefined for a failure in its own right.
  const echoAt = (error: ValidatorError): string | undefined => {
    if (error.keyword === "unevaluatedItems") return error.instancePath;
    const name = error.params.unevaluatedProperty;
    if (error.keyword === "unevaluatedProperties") {
      return typeof name === "string" && declaresAt(error.instancePath)(name) ? error.instancePath : undefined;
    }
    const checked = checkedAsUnevaluated(error);
    return checked !== undefined && declaresAt(checked.object)(checked.name) ? checked.object : undefined;
  };
  const places = new Map<ValidatorError, string>();
  for (const error of errors) {
    const place = echoAt(error);
    if (place !== undefined) places.set(error, place);
  }
  if (places.size === 0) return [...errors];
  const others = errors.filter((error) => !places.has(error));
  const dropped = new Set<ValidatorError>();
  // Deepest first: an echo that stays below an object is a failure of that object.
  const depth = (place: string) => pointerTokens(place)?.length ?? 0;
  const echoes = [...places.keys()];
  for (const error of echoes.sort((a, b) => depth(places.get(b) ?? "") - depth(places.get(a) ?? ""))) {
    const place = places.get(error) ?? "";
    if (
      others.some((other) => isWithin(other.instancePath, place)) ||
      echoes.some((other) => !dropped.has(other) && (places.get(other) ?? "").startsWith(`${place}/`))
    ) {
      dropped.add(error);
    }
  }
  return errors.filter((error) => !dropped.has(error));
}

/** Keywords that move into the answer: one member or item per step. */
const instanceSteps = new Set([
  ...schemaMapKeywords.filter((keyword) => keyword !== "$defs" && keyword !== "definitions"),
  "items",
  "prefixItems",
  "additionalItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
]);
const namedSteps = new Set(schemaMapKeywords);
const indexedSteps = new Set(schemaListKeywords);

/**
 * For a failure inside an `unevaluatedProperties` schema: the object that keyword checked and the property's name,
 * read from the error's place in the schema (keywords after the last `unevaluatedProperties` say how far into the
 * property the failure is) and in the answer.
 */
function checkedAsUnevaluated(error: ValidatorError): { object: string; name: string } | undefined {
  const tokens = pointerTokens(error.schemaPath.replace(/^#[^/]*/, "#")) ?? [];
  let last: number | undefined;
  let below = 0;
  for (let index = 0; index < tokens.length - 1; index++) {
    const token = tokens[index] as string;
    if (token === "unevaluatedProperties") {
      last = index;
      below = 0;
    } else if (
      last !== undefined &&
      instanceSteps.has(token) &&
      !(token === "dependentSchemas" || token === "dependencies")
    ) {
      below += 1;
    }
    if (namedSteps.has(token) || (indexedSteps.has(token) && /^\d+$/.test(tokens[index + 1] ?? ""))) index += 1;
  }
  const path = pointerTokens(error.instancePath) ?? [];
  const at = path.length - below - 1;
  if (last === undefined || at < 0) return undefined;
  const object = path
    .slice(0, at)
    .map((token) => `/${token.replaceAll("~", "~0").replaceAll("/", "~1")}`)
    .join("");
  return { object, name: path[at] as string };
}

function declaresProperty(node: SchemaNode, name: string): boolean {
  if (node.additionalProperties !== undefined) return true;
  if (isSchemaNode(node.properties) && Object.hasOwn(node.properties, name)) return true;
  if (!isSchemaNode(node.patternProperties)) return false;
  return Object.keys(node.patternProperties).some((pattern) => {
    try {
      return new RegExp(pattern, "u").test(name);
    } catch {
      return false;
    }
  });
}

function isWithin(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}
