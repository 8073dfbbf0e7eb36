import type { OutputUnit } from "@cfworker/json-schema";
import type { RefResolver } from "./ajv-discriminator.js";
import type { InterpretedSchema } from "./interpreted-copy.js";
import { type InterpretedLocation, instancePointer, interpretedLocation } from "./interpreted-location.js";
import { ajvSeesDuplicates, dependentMissing, missing, withinAjvPrecision } from "./interpreted-params.js";
import { evaluatedPrunes, passing, unionPrunes } from "./interpreted-prunes.js";
import type { Unit } from "./interpreted-unit.js";
import { pointerTokens } from "./json-pointer.js";
import { isSchemaNode, type SchemaNode, valueAt } from "./schema-nodes.js";
import type { ValidatorError } from "./validator-error.js";

// The interpretive validator reports a summary for every applicator a failure passes through (`properties`, `$ref`,
// `allOf`, `items`, …) and no parameters. Ajv reports the failing keywords only, with parameters taken from the
// schema. The errors here are Ajv's, keyword by keyword, so that one diagnostics code serves both validators.

/** Applicator summaries Ajv does not report: the failures inside them stand for themselves. */
const summaries = new Set([
  "$ref",
  "$recursiveRef",
  "allOf",
  "properties",
  "patternProperties",
  "prefixItems",
  "dependentSchemas",
]);

/** Keywords whose `false` subschema Ajv reports as the keyword itself, not as a `false schema` below it. */
const collectionKeywords = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "propertyNames",
]);

/** Keywords Ajv reports with `params.limit` read from the schema. */
const limits = new Set([
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
]);

/**
 * The interpretive validator's errors for `answer` as Ajv reports them. `discriminators` says whether Ajv compiled the
 * schema with its discriminator option (see ajvUsesDiscriminators).
 */
export function neutralErrors(
  units: readonly OutputUnit[],
  schema: InterpretedSchema,
  answer: unknown,
  discriminators: boolean,
): ValidatorError[] {
  const located = new Map<string, InterpretedLocation>();
  const all: Unit[] = units.map((unit) => {
    let location = located.get(unit.keywordLocation);
    if (location === undefined) {
      location = interpretedLocation(schema, unit.keywordLocation);
      located.set(unit.keywordLocation, location);
    }
    return { unit, instancePath: instancePointer(unit.instanceLocation), location };
  });
  const resolve: RefResolver = (node) => schema.lookup[String(node.__absolute_ref__ ?? "")];
  const errors: ValidatorError[] = [];
  const emit = (error: ValidatorError) => errors.push(error);
  // Some keywords fail once per item or name in the validator, once per place in Ajv (or all at once here).
  const done = new Set<string>();
  const first = (instancePath: string, schemaPath: string) => {
    const key = `${instancePath}\u0000${schemaPath}`;
    if (done.has(key)) return false;
    done.add(key);
    return true;
  };
  const unions = unionPrunes(all, answer, discriminators, resolve, emit);
  const evaluated = evaluatedPrunes(all, resolve);
  const pruned = (unit: OutputUnit, instancePath: string) =>
    unions(unit, instancePath) || evaluated(unit, instancePath);

  for (const [index, { unit, instancePath, location }] of all.entries()) {
    if (pruned(unit, instancePath)) continue;
    const { owner, keyword, ownerPath, through, format } = location;
    // Inside `contains` and `propertyNames` only the keyword's own error counts (see ajvValidate).
    if (through.includes("contains") || through.includes("propertyNames")) continue;
    if (format !== undefined) {
      const schemaPath = `${format.ownerPath}/format`;
      if (first(instancePath, schemaPath)) {
        emit({ instancePath, schemaPath, keyword: "format", params: { format: format.name } });
      }
      continue;
    }
    if (owner === undefined || keyword === undefined) {
      emit({ instancePath, schemaPath: `${ownerPath}/false schema`, keyword: "false schema", params: {} });
      continue;
    }
    const original = schema.originals.get(owner) ?? owner;
    const schemaPath = `${ownerPath}/${keyword}`;
    const nextInstance = all[index + 1]?.instancePath;
    const property = nextInstance === undefined ? undefined : lastToken(nextInstance);
    const falseBelow = (member: unknown) => isSchemaNode(member) && schema.falseSchemas.has(member);
    switch (keyword) {
      case "not":
        if (!schema.falseSchemas.has(owner)) emit({ instancePath, schemaPath, keyword, params: {} });
        else if (!collectionKeywords.has(through.at(-1) ?? "") && !isItemsAfterPrefix(location)) {
          emit({ instancePath, schemaPath: `${ownerPath}/false schema`, keyword: "false schema", params: {} });
        }
        break;
      case "additionalProperties":
      case "unevaluatedProperties":
        if (falseBelow(owner[keyword])) {
          const name = keyword === "additionalProperties" ? "additionalProperty" : "unevaluatedProperty";
          emit({ instancePath, schemaPath, keyword, params: { [name]: property } });
        }
        break;
      case "items":
      case "additionalItems":
      case "unevaluatedItems":
        if (keyword === "items" && !Array.isArray(owner.prefixItems)) break;
        if (falseBelow(owner[keyword]) && first(instancePath, schemaPath)) {
          emit({ instancePath, schemaPath, keyword, params: { limit: itemsBefore(owner, keyword) } });
        }
        break;
      case "propertyNames":
        emit({ instancePath, schemaPath, keyword, params: { propertyName: property } });
        break;
      case "contains":
      case "minContains":
      case "maxContains":
        if (!first(instancePath, `${ownerPath}/contains`)) break;
        emit({
          instancePath,
          schemaPath: `${ownerPath}/contains`,
          keyword: "contains",
          params: {
            minContains: typeof owner.minContains === "number" ? owner.minContains : 1,
            ...(typeof owner.maxContains === "number" && { maxContains: owner.maxContains }),
          },
        });
        break;
      case "if": {
        const next = all[index + 1]?.unit.keywordLocation ?? "";
        const failingKeyword = next.startsWith(unit.keywordLocation.replace(/\/if$/, "/else")) ? "else" : "then";
        emit({ instancePath, schemaPath, keyword, params: { failingKeyword } });
        break;
      }
      case "anyOf":
        emit({ instancePath, schemaPath, keyword, params: {} });
        break;
      case "oneOf":
        emit({
          instancePath,
          schemaPath,
          keyword,
          params: { passingSchemas: passing(all, unit, instancePath, owner) },
        });
        break;
      case "required":
        if (!first(instancePath, schemaPath)) break;
        for (const missingProperty of missing(original.required, answer, instancePath)) {
          emit({ instancePath, schemaPath, keyword, params: { missingProperty } });
        }
        break;
      case "dependentRequired":
      case "dependencies":
        if (!first(instancePath, schemaPath)) break;
        for (const params of dependentMissing(original[keyword], answer, instancePath)) {
          emit({ instancePath, schemaPath, keyword, params });
        }
        break;
      case "type":
        emit({ instancePath, schemaPath, keyword, params: { type: original.type } });
        break;
      case "const":
        emit({ instancePath, schemaPath, keyword, params: { allowedValue: original.const } });
        break;
      case "enum":
        emit({ instancePath, schemaPath, keyword, params: { allowedValues: original.enum } });
        break;
      case "multipleOf":
        if (!withinAjvPrecision(valueAt(answer, pointerTokens(instancePath) ?? []), original.multipleOf)) {
          emit({ instancePath, schemaPath, keyword, params: { multipleOf: original.multipleOf } });
        }
        break;
      case "pattern":
      case "format":
        emit({ instancePath, schemaPath, keyword, params: { [keyword]: original[keyword] } });
        break;
      case "uniqueItems":
        if (ajvSeesDuplicates(original.items, valueAt(answer, pointerTokens(instancePath) ?? []))) {
          emit({ instancePath, schemaPath, keyword, params: {} });
        }
        break;
      case "false":
        emit({ instancePath, schemaPath: `${ownerPath}/false schema`, keyword: "false schema", params: {} });
        break;
      default:
        if (summaries.has(keyword)) break;
        emit({ instancePath, schemaPath, keyword, params: limits.has(keyword) ? { limit: original[keyword] } : {} });
    }
  }
  return errors;
}

/** Whether a `false` is 2020-12's `items: false` after `prefixItems`, which Ajv reports as `items` itself. */
function isItemsAfterPrefix({ through, parent, owner }: InterpretedLocation): boolean {
  return through.at(-1) === "items" && Array.isArray(parent?.prefixItems) && parent?.items === owner;
}

/** The items before those `keyword` checks: Ajv's `limit` of `items`, `additionalItems` and `unevaluatedItems`. */
function itemsBefore(owner: SchemaNode, keyword: string): number {
  if (keyword === "additionalItems" && Array.isArray(owner.items)) return owner.items.length;
  return Array.isArray(owner.prefixItems) ? owner.prefixItems.length : 0;
}

function lastToken(pointer: string): string | undefined {
  return pointerTokens(pointer)?.at(-1);
}
