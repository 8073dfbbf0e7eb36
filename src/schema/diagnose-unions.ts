import { declaredDiscriminator, discriminatorOf, flattenNode, locate } from "./diagnose-path.js";
import { escapePointerToken, pointerTokens } from "./json-pointer.js";
import { isSchemaNode, jsonTypes, resolveLocalRef, type SchemaNode, valueAt } from "./schema-nodes.js";
import type { ValidatorError } from "./validator-error.js";

/**
 * One failure, reduced to what may be shown: schema text and positions in the answer, never a
 * value from the answer or a validator message.
 */
export interface Issue {
  /** The validator's instance path (unmasked; masking happens when the path is described). */
  readonly instancePath: string;
  /** Where the failing keyword is in the schema (the union's place, for an issue that stands for a union). */
  readonly schemaPath: string;
  readonly keyword: string;
  readonly expectedTypes?: readonly string[];
  readonly missing?: readonly string[];
  readonly allowed?: readonly unknown[];
  readonly limit?: number | string;
  /** The failure concerns a property name the schema does not declare: the path gains a `*`. */
  readonly unknownProperty?: boolean;
  /** A `oneOf` that more than one alternative matched. */
  readonly ambiguous?: boolean;
}

interface Pruning {
  readonly removed: Set<ValidatorError>;
  readonly added: Issue[];
  /** The errors sorted by instance path, so those at or below one place form one run. */
  readonly byPath: readonly ValidatorError[];
}

const unionKeywords = new Set(["oneOf", "anyOf", "discriminator"]);

/**
 * A validator's errors as issues, with the noise of unions taken out: of a union whose alternatives a
 * discriminator tells apart, only the named alternative's errors remain (or one error at the
 * discriminator); of any other union, the errors of the closest alternative (the one of the
 * right type with the fewest errors), or one type error listing every type it allows.
 * Relies on `schemaPath`s from the root, which `SchemaValidators.validatorFor` arranges by inlining `$ref`s.
 */
export function issuesOf(errors: readonly ValidatorError[], schema: unknown, data: unknown): Issue[] {
  const byPath = [...errors].sort((a, b) =>
    a.instancePath < b.instancePath ? -1 : a.instancePath > b.instancePath ? 1 : 0,
  );
  const pruning: Pruning = { removed: new Set(), added: [], byPath };
  // Outer unions first (in the answer, then in the schema): what they prune (other alternatives) includes the unions
  // nested in them. The order must not depend on the validator's: inside a recursive reference a nested union's
  // `schemaPath` restarts from the reference, and may equal the outer one's.
  const depth = (path: string) => pointerTokens(path)?.length ?? 0;
  const unions = errors
    .filter((error) => unionKeywords.has(error.keyword))
    .sort(
      (a, b) =>
        depth(a.instancePath) - depth(b.instancePath) ||
        a.schemaPath.length - b.schemaPath.length ||
        (a.instancePath < b.instancePath ? -1 : a.instancePath > b.instancePath ? 1 : 0),
    );
  for (const union of unions) {
    if (!pruning.removed.has(union)) pruneUnion(union, schema, data, pruning);
  }
  const kept = errors.filter((error) => !pruning.removed.has(error)).map(issueOf);
  return withoutSummaries([...kept, ...pruning.added]);
}

function pruneUnion(union: ValidatorError, schema: unknown, data: unknown, pruning: Pruning) {
  const drop = (list: readonly ValidatorError[]) => {
    for (const error of list) pruning.removed.add(error);
  };
  const keyword = union.keyword === "discriminator" ? "oneOf" : union.keyword;
  const parentPath = union.schemaPath.slice(0, union.schemaPath.lastIndexOf("/"));
  const prefix = `${parentPath}/${keyword}/`;
  const path = pointerTokens(union.instancePath) ?? [];
  const instance = valueAt(data, path);
  const node = unionNode(schema, parentPath, keyword, data, path);
  const alternatives: unknown[] = node !== undefined && Array.isArray(node[keyword]) ? node[keyword] : [];
  const members = errorsWithin(pruning.byPath, union.instancePath).filter(
    (error) => error !== union && !pruning.removed.has(error) && error.schemaPath.startsWith(prefix),
  );
  const discriminator = node && discriminatorOf(alternatives, schema, declaredDiscriminator(node));

  if (union.keyword === "discriminator") {
    // Ajv validated no alternative: the tag is missing, not a string, or names no alternative.
    drop([union]);
    const tag = typeof union.params.tag === "string" ? union.params.tag : discriminator?.property;
    if (tag === undefined) pruning.added.push({ ...placeOf(union), keyword: "discriminator" });
    else pruning.added.push(tagIssue(union, instance, tag, tagValues(alternatives, tag, schema)));
    return;
  }
  if (
    discriminator !== undefined &&
    isSchemaNode(instance) &&
    (discriminator.required || Object.hasOwn(instance, discriminator.property))
  ) {
    drop([union]);
    const selected = discriminator.values.indexOf(instance[discriminator.property]);
    if (selected < 0) {
      drop(members);
      pruning.added.push(tagIssue(union, instance, discriminator.property, discriminator.values));
    } else {
      drop(members.filter((error) => branchOf(error, prefix) !== selected));
    }
    return;
  }
  if (union.keyword === "oneOf" && Array.isArray(union.params.passingSchemas)) {
    drop(members); // several alternatives match: their differences are not errors
    return;
  }
  const branches = new Map<number, ValidatorError[]>();
  for (const error of members) {
    const branch = branchOf(error, prefix);
    if (branch !== undefined) branches.set(branch, [...(branches.get(branch) ?? []), error]);
  }
  if (branches.size === 0) return;
  const wrongType = (error: ValidatorError) => error.keyword === "type" && error.instancePath === union.instancePath;
  const closest = [...branches]
    .filter(([, list]) => !list.some(wrongType))
    .sort(([indexA, listA], [indexB, listB]) => listA.length - listB.length || indexA - indexB)[0];
  drop([union]);
  if (closest !== undefined) {
    drop(members.filter((error) => !closest[1].includes(error)));
    return;
  }
  const expectedTypes = [...new Set(members.filter(wrongType).flatMap((error) => typesOf(error.params.type)))];
  drop(members);
  pruning.added.push({ ...placeOf(union), keyword: "type", expectedTypes });
}

function placeOf({ instancePath, schemaPath }: ValidatorError): { instancePath: string; schemaPath: string } {
  return { instancePath, schemaPath };
}

/** A missing discriminator is a `required` error; a wrong one an `enum` error at the discriminator. */
function tagIssue(union: ValidatorError, instance: unknown, tag: string, allowed: readonly unknown[]): Issue {
  const { instancePath, schemaPath } = union;
  if (isSchemaNode(instance) && !Object.hasOwn(instance, tag)) {
    return { instancePath, schemaPath, keyword: "required", missing: [tag] };
  }
  return { instancePath: `${instancePath}/${escapePointerToken(tag)}`, schemaPath, keyword: "enum", allowed };
}

/** Every value the alternatives allow for their tag (an alternative may allow several). */
function tagValues(alternatives: readonly unknown[], tag: string, root: unknown): unknown[] {
  const values = alternatives.flatMap((alternative) =>
    flattenNode(alternative, root)
      .flatMap((node) => flattenNode(isSchemaNode(node.properties) ? node.properties[tag] : undefined, root))
      .flatMap((node) => (Object.hasOwn(node, "const") ? [node.const] : Array.isArray(node.enum) ? node.enum : [])),
  );
  return [...new Set(values)];
}

function unionNode(schema: unknown, parentPath: string, keyword: string, data: unknown, path: readonly string[]) {
  const node = resolveLocalRef(schema, parentPath);
  if (isSchemaNode(node) && Array.isArray(node[keyword])) return node;
  // A schemaPath relative to a referenced schema (when `$ref`s could not be inlined): look it up by place.
  return locate(schema, data, path).all.find((candidate: SchemaNode) => Array.isArray(candidate[keyword]));
}

function branchOf(error: ValidatorError, prefix: string): number | undefined {
  const match = /^(\d+)(\/|$)/.exec(error.schemaPath.slice(prefix.length));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The errors at a place or below it, found by binary search in the path-sorted list. */
function errorsWithin(byPath: readonly ValidatorError[], base: string): ValidatorError[] {
  let low = 0;
  let high = byPath.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((byPath[middle]?.instancePath ?? "") < base) low = middle + 1;
    else high = middle;
  }
  const found: ValidatorError[] = [];
  for (let index = low; index < byPath.length; index++) {
    const error = byPath[index];
    if (error === undefined || !error.instancePath.startsWith(base)) break;
    if (isWithin(error.instancePath, base)) found.push(error);
  }
  return found;
}

function isWithin(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

function typesOf(type: unknown): string[] {
  const types = typeof type === "string" ? type.split(",") : Array.isArray(type) ? type : [];
  return types.filter((item): item is string => typeof item === "string" && jsonTypes.has(item));
}

/** Only the parameters that come from the schema are read; `tagValue`, `propertyName` and messages never. */
function issueOf(error: ValidatorError): Issue {
  const { instancePath, schemaPath, keyword } = error;
  const params: Readonly<Record<string, unknown>> = error.params;
  if (error.propertyName !== undefined || keyword === "propertyNames") {
    return { instancePath, schemaPath, keyword: "propertyNames", unknownProperty: true };
  }
  switch (keyword) {
    case "type":
      return { instancePath, schemaPath, keyword, expectedTypes: typesOf(params.type) };
    case "required":
    case "dependentRequired":
    case "dependencies":
      return {
        instancePath,
        schemaPath,
        keyword,
        missing: typeof params.missingProperty === "string" ? [params.missingProperty] : [],
      };
    case "additionalProperties":
    case "unevaluatedProperties":
      return { instancePath, schemaPath, keyword, unknownProperty: true };
    case "enum":
      return {
        instancePath,
        schemaPath,
        keyword,
        allowed: Array.isArray(params.allowedValues) ? params.allowedValues : [],
      };
    case "const":
      return { instancePath, schemaPath, keyword, allowed: [params.allowedValue] };
    case "pattern":
    case "format":
      return typeof params[keyword] === "string"
        ? { instancePath, schemaPath, keyword, limit: params[keyword] }
        : { instancePath, schemaPath, keyword };
    case "oneOf":
      return { instancePath, schemaPath, keyword, ambiguous: Array.isArray(params.passingSchemas) };
    case "false schema":
      return { instancePath, schemaPath, keyword: "false_schema" };
    default: {
      // Ajv names the limit after the keyword for contains and multipleOf, `limit` elsewhere.
      const limit =
        keyword === "contains" ? params.minContains : keyword === "multipleOf" ? params.multipleOf : params.limit;
      return typeof limit === "number"
        ? { instancePath, schemaPath, keyword, limit }
        : { instancePath, schemaPath, keyword };
    }
  }
}

/** Drops errors that only summarise others (an unmatched union, an `if`) and errors beside a wrong type. */
function withoutSummaries(issues: readonly Issue[]): Issue[] {
  const summary = (issue: Issue) =>
    issue.keyword === "anyOf" ||
    issue.keyword === "if" ||
    issue.keyword === "discriminator" ||
    (issue.keyword === "oneOf" && issue.ambiguous !== true);
  const wrongType = new Set(issues.filter((issue) => issue.keyword === "type").map((issue) => issue.instancePath));
  return issues.filter((issue) => {
    if (summary(issue)) {
      return !issues.some((other) => !summary(other) && isWithin(other.instancePath, issue.instancePath));
    }
    return issue.keyword === "type" || !wrongType.has(issue.instancePath);
  });
}
