import { invalidRequest } from "../errors/gateway-error.js";
import { memberPath } from "../json/member-path.js";
import { emptyCall, type LogicalCall } from "../logical-call.js";
import { codePoints, compactJsonCodePoints } from "../window/code-points.js";
import {
  asArray,
  asObject,
  asString,
  isObject,
  type JsonObject,
  optionalFlag,
  optionalObject,
  optionalString,
  textOf,
} from "./wire-fields.js";

/**
 * Measurement by exclusion. A surface describes its wire body with the rules below, and one walk
 * reads the body into its logical call: every field counts unless a rule says the model never
 * reads it (`skip`), a value of a closed vocabulary counts 0, known text counts as text, and
 * every other value, at any depth, counts as the compact JSON of its key and value (`other`).
 */

/** The category a text counts in. */
export type Section = "system" | "messages" | "tools" | "schema";

/** The state of one walk: the call being built and the section texts count in. */
export interface Walk {
  call: LogicalCall;
  section: Section;
}

/** Reads one wire value (`undefined` when absent) at `path` into the call; `key` is its member name. */
export type Rule = (value: unknown, path: string, walk: Walk, key?: string) => void;

/** Reads a whole body with `rule` into a new call. */
export function readBody(rule: Rule, body: JsonObject, call: LogicalCall, path = ""): LogicalCall {
  rule(body, path, { call, section: "messages" });
  return call;
}

/** Counts a value as other: the compact JSON of its key (when it has one) and value. */
export function countOther(walk: Walk, path: string, key: string | undefined, value: unknown, unknown: boolean): void {
  const keyChars = key === undefined ? 0 : codePoints(JSON.stringify(key)) + 1;
  walk.call.other.push({ path, chars: keyChars + compactJsonCodePoints(value), unknown });
}

/** The texts of the walk's section. */
function textsOf(walk: Walk): unknown[] {
  const call = walk.call;
  switch (walk.section) {
    case "system":
      return call.system;
    case "messages":
      return call.messages;
    case "schema":
      return call.schemaTexts;
    case "tools":
      return call.tools;
  }
}

/** A field the model never reads: not counted. */
export const skip: Rule = () => undefined;

/** Text the model reads, counted as its code points; it must be a string. */
export const text: Rule = (value, path, walk) => {
  if (value === undefined || value === null) return;
  textsOf(walk).push(asString(value, path));
};

/** Structured content the model reads, counted as compact JSON (a string as it is). */
export const json: Rule = (value, _path, walk) => {
  if (value === undefined || value === null) return;
  if (walk.section === "tools") walk.call.tools.push(value);
  else textsOf(walk).push(textOf(value));
};

/** A known field counted as other: ids, names of stored things, encrypted reasoning. */
export const counted: Rule = (value, path, walk, key) => {
  if (value === undefined || value === null) return;
  countOther(walk, path, key, value, false);
};

/** A closed vocabulary: a value in `values` counts 0; any other value counts as other. */
export function vocabulary(...values: string[]): Rule {
  const known = new Set(values);
  return (value, path, walk, key) => {
    if (value === undefined || value === null || (typeof value === "string" && known.has(value))) return;
    countOther(walk, path, key, value, false);
  };
}

/** Text or structured content: a string is text, anything else is read by `rule`. */
export function textOr(rule: Rule): Rule {
  return (value, path, walk, key) =>
    typeof value === "string" ? text(value, path, walk, key) : rule(value, path, walk, key);
}

/** Reads a subtree with its texts counted in `section`. */
export function section(name: Section, rule: Rule): Rule {
  return (value, path, walk, key) =>
    rule(value, path, walk.section === name ? walk : { call: walk.call, section: name }, key);
}

/** A rule that must be read even when its member is absent, so that it can refuse. */
interface RequiredRule extends Rule {
  required: true;
}

/** A required member: absent or null is INVALID_REQUEST. */
export function required(rule: Rule, expected: string): Rule {
  const requiredRule: Rule = (value, path, walk, key) => {
    if (value === undefined || value === null) throw invalidRequest(`'${path}' must be ${expected}.`, path);
    rule(value, path, walk, key);
  };
  return Object.assign(requiredRule, { required: true as const });
}

function isRequired(rule: Rule): rule is RequiredRule {
  return (rule as Partial<RequiredRule>).required === true;
}

/** An array whose items `item` reads. */
export function arrayOf(item: Rule): Rule {
  return (value, path, walk) => {
    if (value === undefined || value === null) return;
    const items = asArray(value, path);
    for (let index = 0; index < items.length; index++) item(items[index], `${path}[${index}]`, walk);
  };
}

/** How an object's members are spelled and read. */
export interface ObjectOptions {
  /**
   * Also accept each member under this other spelling (Gemini takes `systemInstruction` and
   * `system_instruction` alike); both at once is a conflict.
   */
  alias?: (name: string) => string;
  /** Read the members in the order declared rather than as the body orders them (e.g. a cache prefix's order). */
  inOrder?: boolean;
}

/** A declared member: its rule, its declared name, and its other spelling, if it has one. */
interface Member {
  name: string;
  rule: Rule;
  alias: string | undefined;
}

/** The value of a member under either spelling; both set (neither null) is a conflict. */
function memberValue(fields: JsonObject, member: Member, path: string): { value: unknown; key: string } {
  const value = Object.hasOwn(fields, member.name) ? fields[member.name] : undefined;
  if (member.alias === undefined || !Object.hasOwn(fields, member.alias)) return { value, key: member.name };
  const aliased = fields[member.alias];
  if (value !== undefined && value !== null && aliased !== null) {
    const at = memberPath(path, member.name);
    throw invalidRequest(`'${at}' and '${memberPath(path, member.alias)}' must not both be set.`, at);
  }
  return value === undefined || value === null ? { value: aliased, key: member.alias } : { value, key: member.name };
}

/**
 * An object: each declared member is read by its rule, as the body orders them (or, with
 * `inOrder`, as declared); every member not declared is unknown and counts as other. An absent
 * member is not read unless it is required, which then refuses. A path names a member by its
 * declared name, whichever spelling the body used.
 */
export function object(members: Record<string, Rule>, options: ObjectOptions = {}): Rule {
  const byKey = new Map<string, Member>();
  const declared: Member[] = [];
  for (const [name, rule] of Object.entries(members)) {
    const alias = options.alias?.(name);
    const member = { name, rule, alias: alias === name ? undefined : alias };
    declared.push(member);
    byKey.set(name, member);
    if (member.alias !== undefined) byKey.set(member.alias, member);
  }
  const requiredMembers = declared.filter((member) => isRequired(member.rule));
  const read = (fields: JsonObject, member: Member, path: string, walk: Walk) => {
    const { value, key } = memberValue(fields, member, path);
    member.rule(value, path === "" ? member.name : `${path}.${member.name}`, walk, key);
  };
  return (value, path, walk) => {
    if (value === undefined || value === null) return;
    const fields = asObject(value, path);
    if (options.inOrder) {
      for (const member of declared) {
        if (Object.hasOwn(fields, member.name) || (member.alias !== undefined && Object.hasOwn(fields, member.alias))) {
          read(fields, member, path, walk);
        }
      }
    }
    for (const key of Object.keys(fields)) {
      const member = byKey.get(key);
      if (member === undefined) countOther(walk, memberPath(path, key), key, fields[key], true);
      // A member in both spellings is read once, at its declared name (or at its alias when that alone is set).
      else if (!options.inOrder && (key === member.name || !Object.hasOwn(fields, member.name))) {
        read(fields, member, path, walk);
      }
    }
    for (const member of requiredMembers) {
      if (!Object.hasOwn(fields, member.name) && (member.alias === undefined || !Object.hasOwn(fields, member.alias))) {
        read(fields, member, path, walk);
      }
    }
  };
}

/** A variant of a tagged object: its own rule, or its members besides the tag. */
export type Variant = Rule | Record<string, Rule>;

/**
 * An object whose kind a tag member names (`type`, `role`): the variant of that name reads it
 * (a variant given as members gets the tag as a member that counts 0). Without the tag,
 * `fallback` names the variant, or the tag is required. An object of a kind the surface does not
 * know is unknown as a whole and counts as other.
 */
export function tagged(tag: string, variants: Record<string, Variant>, fallback?: string): Rule {
  const rules = new Map<string, Rule>();
  for (const [name, variant] of Object.entries(variants)) {
    rules.set(name, typeof variant === "function" ? variant : object({ [tag]: skip, ...variant }));
  }
  return (value, path, walk, key) => {
    if (value === undefined || value === null) return;
    const fields = asObject(value, path);
    const name =
      fields[tag] === undefined && fallback !== undefined ? fallback : asString(fields[tag], memberPath(path, tag));
    const rule = rules.get(name);
    if (rule === undefined) countOther(walk, path, key, fields, true);
    else rule(fields, path, walk, key);
  };
}

/** Content the model reads that the gateway cannot measure (e.g. a file id): recorded by path. */
export function unmeasured(what: string): Rule {
  return (value, path, walk) => {
    if (value === undefined || value === null) return;
    walk.call.unmeasured.push({ path, what });
  };
}

/** Runs several rules on the same value, e.g. to count a tool and note that the provider expands it. */
export function both(first: Rule, second: Rule): Rule {
  return (value, path, walk, key) => {
    first(value, path, walk, key);
    second(value, path, walk, key);
  };
}

/** Sets a member of the call from a value, e.g. the model or the stream flag. */
export function capture(set: (call: LogicalCall, value: unknown, path: string) => void): Rule {
  return (value, path, walk) => set(walk.call, value, path);
}

/** The model the body names. */
export const model: Rule = capture((call, value, path) => {
  call.model = optionalString(value, path);
});

/** The stream flag. */
export const stream: Rule = capture((call, value, path) => {
  call.stream = optionalFlag(value, path);
});

/** The response schema sent natively, counted as compact JSON with the schema. */
export const responseSchema: Rule = capture((call, value, path) => {
  call.responseSchema = optionalObject(value, path);
});

/** Members the model never reads: parameters of sampling, transport, storage and billing. */
export function parameters(...names: string[]): Record<string, Rule> {
  return Object.fromEntries(names.map((name) => [name, skip]));
}

/**
 * Reads a value that counts whole elsewhere (a tool declaration, counted as compact JSON) only
 * for its shape: a member its surface does not know is noted as unknown, counting 0 because it is
 * counted already, so that a policy refusing unknown fields refuses it here too.
 */
export function shape(rule: Rule): Rule {
  return (value, path, walk, key) => {
    const scratch = emptyCall();
    rule(value, path, { call: scratch, section: walk.section }, key);
    for (const field of scratch.other) if (field.unknown) walk.call.other.push({ ...field, chars: 0 });
  };
}

/** Reads only object values with `rule`; any other value is left to the rules beside it. */
export function objectsOnly(rule: Rule): Rule {
  return (value, path, walk, key) => {
    if (isObject(value)) rule(value, path, walk, key);
  };
}
