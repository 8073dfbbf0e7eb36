import type { OutputUnit } from "@cfworker/json-schema";
import { ajvDiscriminatorMapping, type RefResolver } from "./ajv-discriminator.js";
import type { Unit } from "./interpreted-unit.js";
import { pointerTokens } from "./json-pointer.js";
import { isSchemaNode, type SchemaNode, valueAt } from "./schema-nodes.js";
import type { ValidatorError } from "./validator-error.js";

// Which of the interpretive validator's errors Ajv would not report at all: the alternatives of a union Ajv
// validates by its discriminator, and the checks against an `unevaluatedProperties` schema of properties Ajv counts
// as evaluated. Each returns whether an error (a unit) is left out.

/**
 * Decides which alternatives' errors of each failed `oneOf` remain. Where Ajv validates by a discriminator, it
 * checks the tag (an error `discriminator` when it is no string or names no alternative), then the named
 * alternative alone, and reports no `oneOf`: so here too. Returns whether a unit is left out.
 */
export function unionPrunes(
  all: readonly Unit[],
  answer: unknown,
  discriminators: boolean,
  resolve: RefResolver,
  emit: (error: ValidatorError) => void,
): (unit: OutputUnit, instancePath: string) => boolean {
  const prunes: { union: OutputUnit; prefix: string; instancePath: string; keep: number | undefined }[] = [];
  if (discriminators) {
    for (const { unit, instancePath, location } of all) {
      const { owner, keyword, ownerPath } = location;
      if (keyword !== "oneOf" || owner === undefined || owner.discriminator === undefined) continue;
      const mapping = ajvDiscriminatorMapping(owner, resolve);
      const tagName = (owner.discriminator as SchemaNode).propertyName as string;
      const instance = valueAt(answer, pointerTokens(instancePath) ?? []);
      let keep: number | undefined;
      if (isSchemaNode(instance) && mapping !== undefined) {
        const tag = instance[tagName];
        keep = typeof tag === "string" ? mapping.get(tag) : undefined;
        if (keep === undefined) {
          const error = typeof tag === "string" ? "mapping" : "tag";
          emit({
            instancePath,
            schemaPath: `${ownerPath}/discriminator`,
            keyword: "discriminator",
            params: { error, tag: tagName },
          });
        }
      }
      prunes.push({ union: unit, prefix: `${unit.keywordLocation}/`, instancePath, keep });
    }
  }
  return (unit, instancePath) =>
    prunes.some(
      (prune) =>
        prune.union === unit ||
        (unit.keywordLocation.startsWith(prune.prefix) &&
          isWithin(instancePath, prune.instancePath) &&
          branchOf(unit.keywordLocation, prune.prefix) !== prune.keep),
    );
}

/**
 * Ajv counts a property as evaluated where a `properties` (or `patternProperties`, `additionalProperties`) of the
 * node or of its `allOf` branches and `$ref` targets names it, valid or not; the interpretive validator only when its
 * value passed there. So where `unevaluatedProperties` is a schema (not `false`), the validator also checks against
 * it a declared property whose value failed: those failures are left out, as Ajv never makes them.
 */
export function evaluatedPrunes(
  all: readonly Unit[],
  resolve: RefResolver,
): (unit: OutputUnit, instancePath: string) => boolean {
  const prunes: { prefix: string; instancePath: string }[] = [];
  for (const [index, { unit, location }] of all.entries()) {
    const { owner, keyword } = location;
    const next = all[index + 1];
    if (keyword !== "unevaluatedProperties" || owner === undefined || next === undefined) continue;
    const name = pointerTokens(next.instancePath)?.at(-1);
    if (name !== undefined && declaredStatically(owner, name, resolve)) {
      prunes.push({ prefix: `${unit.keywordLocation}/`, instancePath: next.instancePath });
    }
  }
  return (unit, instancePath) =>
    prunes.some((prune) => unit.keywordLocation.startsWith(prune.prefix) && isWithin(instancePath, prune.instancePath));
}

function declaredStatically(
  node: SchemaNode,
  name: string,
  resolve: RefResolver,
  seen = new Set<SchemaNode>(),
): boolean {
  if (seen.has(node)) return false;
  seen.add(node);
  if (node.additionalProperties !== undefined) return true;
  if (isSchemaNode(node.properties) && Object.hasOwn(node.properties, name)) return true;
  if (
    isSchemaNode(node.patternProperties) &&
    Object.keys(node.patternProperties).some((pattern) => new RegExp(pattern, "u").test(name))
  ) {
    return true;
  }
  const target = typeof node.$ref === "string" ? resolve(node) : undefined;
  const branches = [...(Array.isArray(node.allOf) ? node.allOf : []), target];
  return branches.some((branch) => isSchemaNode(branch) && declaredStatically(branch, name, resolve, seen));
}

/** The first two alternatives of a failed `oneOf` that passed (Ajv's `passingSchemas`), or null when none did. */
export function passing(
  all: readonly Unit[],
  union: OutputUnit,
  instancePath: string,
  owner: SchemaNode,
): number[] | null {
  const alternatives = Array.isArray(owner.oneOf) ? owner.oneOf.length : 0;
  const prefix = `${union.keywordLocation}/`;
  const failed = new Set(
    all
      .filter((other) => other.unit.keywordLocation.startsWith(prefix) && isWithin(other.instancePath, instancePath))
      .map((other) => branchOf(other.unit.keywordLocation, prefix)),
  );
  const passed = Array.from({ length: alternatives }, (_, index) => index).filter((index) => !failed.has(index));
  return passed.length >= 2 ? passed.slice(0, 2) : null;
}

function branchOf(location: string, prefix: string): number | undefined {
  const match = /^(\d+)(\/|$)/.exec(location.slice(prefix.length));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function isWithin(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}
