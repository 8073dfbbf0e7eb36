import { invalidRequest } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { memberPath } from "../json/member-path.js";
import { recurringValue } from "../json/recurring-values.js";
import { type Tape, TapeKind } from "../json/tape.js";
import { TapeText } from "../json/tape-text.js";
import { KeyTable, keyFirstUnit, keyOf, memberToken, tapeString, tapeValue } from "../json/tape-values.js";
import { type CallText, emptyCall, type LogicalCall } from "../logical-call.js";
import { codePoints, compactJsonCodePoints } from "../window/code-points.js";
import { asArray, asObject, asString, optionalFlag, optionalObject, optionalString, textOf } from "./wire-fields.js";

/**
 * Measurement by exclusion. A surface describes its wire body with the rules below, and one walk
 * reads the body into its logical call: every field counts unless a rule says the model never
 * reads it (`skip`), a value of a closed vocabulary counts 0, known text counts as text, and
 * every other value, at any depth, counts as the compact JSON of its key and value (`other`).
 *
 * Each rule reads a parsed value, and the rules below read the same body straight from its bytes
 * too (`Rule.tape`, over a tape of src/json/tape.ts) with the same result: a text is counted
 * from the scan without being decoded, a skipped member is never looked at, an unknown one counts
 * its compact JSON from the scan. A tape rule handles what it expects; for anything else (a value
 * of another type, an alias, a key a parser would reorder) it parses that value and hands it to
 * its value rule, which then decides, and refuses, exactly as on the parsed body. A rule without a
 * tape counterpart (a surface's own, `capture`) always reads the parsed value of its subtree.
 */

/** The category a text counts in. */
export type Section = "system" | "messages" | "tools" | "schema";

/** The state of one walk: the call being built and the section texts count in. */
export interface Walk {
  call: LogicalCall;
  section: Section;
}

/** Reads one value of a tape (token `at`, or -1 when absent) as its rule reads the parsed value. */
export type TapeRule = (tape: Tape, at: number, path: string, walk: Walk, key?: string) => void;

/** Reads one wire value (`undefined` when absent) at `path` into the call; `key` is its member name. */
export interface Rule {
  (value: unknown, path: string, walk: Walk, key?: string): void;
  /** The same rule over a tape; absent, the subtree is parsed and read by the rule itself. */
  tape?: TapeRule;
}

/** Reads a whole body with `rule` into a new call. */
export function readBody(rule: Rule, body: JsonObject, call: LogicalCall, path = ""): LogicalCall {
  rule(body, path, { call, section: "messages" });
  return call;
}

/** Reads a whole body scanned into `tape` with `rule` into a new call, as `readBody` reads it parsed. */
export function readTape(rule: Rule, tape: Tape, call: LogicalCall, path = ""): LogicalCall {
  onTape(rule)(tape, 0, path, { call, section: "messages" });
  return call;
}

/** A rule's tape counterpart: its own, or the rule reading the parsed value of the token. */
function onTape(rule: Rule): TapeRule {
  rule.tape ??= (tape, at, path, walk, key) => rule(valueAt(tape, at), path, walk, key);
  return rule.tape;
}

/** The parsed value of a token, undefined when absent. */
function valueAt(tape: Tape, at: number): unknown {
  return at < 0 ? undefined : tapeValue(tape, at);
}

/** Whether a token is absent or null, which most rules read as absent. */
function absent(tape: Tape, at: number): boolean {
  return at < 0 || tape.kind[at] === TapeKind.Null;
}

/** `rule` with its tape counterpart. */
function withTape(rule: Rule, tape: TapeRule): Rule {
  rule.tape = tape;
  return rule;
}

/** The code points a member's key adds to its compact JSON: the quoted key and the colon. */
function keyChars(key: string | undefined): number {
  return key === undefined ? 0 : codePoints(JSON.stringify(key)) + 1;
}

/** Counts a value as other: the compact JSON of its key (when it has one) and value. */
export function countOther(walk: Walk, path: string, key: string | undefined, value: unknown, unknown: boolean): void {
  walk.call.other.push({ path, chars: keyChars(key) + compactJsonCodePoints(value), unknown });
}

/** Counts a token as other, as `countOther` counts its parsed value. */
function countOtherToken(walk: Walk, path: string, key: string | undefined, tape: Tape, at: number, unknown: boolean) {
  walk.call.other.push({ path, chars: keyChars(key) + (tape.compact[at] as number), unknown });
}

/** The texts of the walk's section. */
function textsOf(walk: Walk): CallText[] | unknown[] {
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
export const skip: Rule = withTape(
  () => undefined,
  () => undefined,
);

/** Text the model reads, counted as its code points; it must be a string. */
export const text: Rule = withTape(
  (value, path, walk) => {
    if (value === undefined || value === null) return;
    textsOf(walk).push(asString(value, path));
  },
  (tape, at, path, walk, key) => {
    if (absent(tape, at)) return;
    if (tape.kind[at] === TapeKind.String) textsOf(walk).push(new TapeText(tape, at));
    else text(valueAt(tape, at), path, walk, key);
  },
);

/** Structured content the model reads, counted as compact JSON (a string as it is). */
export const json: Rule = withTape(
  (value, _path, walk) => {
    if (value === undefined || value === null) return;
    if (walk.section === "tools") walk.call.tools.push(value);
    else textsOf(walk).push(textOf(value));
  },
  (tape, at, path, walk, key) => {
    if (absent(tape, at)) return;
    if (walk.section === "tools") walk.call.tools.push(recurringValue(tape, at));
    else if (tape.kind[at] === TapeKind.String) textsOf(walk).push(new TapeText(tape, at));
    else json(valueAt(tape, at), path, walk, key);
  },
);

/** A known field counted as other: ids, names of stored things, encrypted reasoning. */
export const counted: Rule = withTape(
  (value, path, walk, key) => {
    if (value === undefined || value === null) return;
    countOther(walk, path, key, value, false);
  },
  (tape, at, path, walk, key) => {
    if (!absent(tape, at)) countOtherToken(walk, path, key, tape, at, false);
  },
);

/** A closed vocabulary: a value in `values` counts 0; any other value counts as other. */
export function vocabulary(...values: string[]): Rule {
  const known = new Set(values);
  const longest = Math.max(0, ...values.map((value) => value.length));
  return withTape(
    (value, path, walk, key) => {
      if (value === undefined || value === null || (typeof value === "string" && known.has(value))) return;
      countOther(walk, path, key, value, false);
    },
    (tape, at, path, walk, key) => {
      if (absent(tape, at)) return;
      const isKnown =
        tape.kind[at] === TapeKind.String && (tape.size[at] as number) <= longest && known.has(tapeString(tape, at));
      if (!isKnown) countOtherToken(walk, path, key, tape, at, false);
    },
  );
}

/** Text or structured content: a string is text, anything else is read by `rule`. */
export function textOr(rule: Rule): Rule {
  return withTape(
    (value, path, walk, key) =>
      typeof value === "string" ? text(value, path, walk, key) : rule(value, path, walk, key),
    (tape, at, path, walk, key) =>
      at >= 0 && tape.kind[at] === TapeKind.String
        ? onTape(text)(tape, at, path, walk, key)
        : onTape(rule)(tape, at, path, walk, key),
  );
}

/** The walk with its texts counted in `name`. */
function inSection(walk: Walk, name: Section): Walk {
  return walk.section === name ? walk : { call: walk.call, section: name };
}

/** Reads a subtree with its texts counted in `section`. */
export function section(name: Section, rule: Rule): Rule {
  return withTape(
    (value, path, walk, key) => rule(value, path, inSection(walk, name), key),
    (tape, at, path, walk, key) => onTape(rule)(tape, at, path, inSection(walk, name), key),
  );
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
  requiredRule.tape = (tape, at, path, walk, key) =>
    absent(tape, at) ? requiredRule(valueAt(tape, at), path, walk, key) : onTape(rule)(tape, at, path, walk, key);
  return Object.assign(requiredRule, { required: true as const });
}

function isRequired(rule: Rule): rule is RequiredRule {
  return (rule as Partial<RequiredRule>).required === true;
}

/** An array whose items `item` reads. */
export function arrayOf(item: Rule): Rule {
  const arrayRule: Rule = (value, path, walk) => {
    if (value === undefined || value === null) return;
    const items = asArray(value, path);
    for (let index = 0; index < items.length; index++) item(items[index], `${path}[${index}]`, walk);
  };
  return withTape(arrayRule, (tape, at, path, walk, key) => {
    if (absent(tape, at)) return;
    if (tape.kind[at] !== TapeKind.Array) return arrayRule(valueAt(tape, at), path, walk, key);
    const itemOnTape = onTape(item);
    const end = tape.next[at] as number;
    for (let token = at + 1, index = 0; token < end; token = tape.next[token] as number, index++) {
      itemOnTape(tape, token, `${path}[${index}]`, walk);
    }
  });
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
  const objectRule: Rule = (value, path, walk) => {
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
  const aliases = new KeyTable(declared.flatMap(({ alias }) => (alias === undefined ? [] : [[alias, true] as const])));
  const tapeMembers = new KeyTable(byKey);
  return withTape(objectRule, (tape, at, path, walk, key) => {
    if (absent(tape, at)) return;
    const end = tape.next[at] as number;
    // The value rule decides where the parse would differ: another type, an alias, or a key that
    // a parsed object lists first (an array index, such as "0").
    let plain = tape.kind[at] === TapeKind.Object;
    for (let token = at + 1; plain && token < end; token = tape.next[token + 1] as number) {
      const first = keyFirstUnit(tape, token);
      if ((first >= 0x30 && first <= 0x39) || (aliases.size > 0 && aliases.find(tape, token) !== undefined)) {
        plain = false;
      }
    }
    if (!plain) return objectRule(valueAt(tape, at), path, walk, key);
    const readMember = (member: Member, token: number) =>
      onTape(member.rule)(tape, token, path === "" ? member.name : `${path}.${member.name}`, walk, member.name);
    if (options.inOrder) {
      for (const member of declared) {
        const token = memberToken(tape, at, member.name);
        if (token >= 0) readMember(member, token);
      }
    }
    let seen = 0;
    for (let token = at + 1; token < end; token = tape.next[token + 1] as number) {
      const member = tapeMembers.find(tape, token);
      if (member === undefined) {
        const name = keyOf(tape, token);
        countOtherToken(walk, memberPath(path, name), name, tape, token + 1, true);
      } else {
        if (isRequired(member.rule)) seen++;
        if (!options.inOrder) readMember(member, token + 1);
      }
    }
    if (seen === requiredMembers.length) return;
    for (const member of requiredMembers) if (memberToken(tape, at, member.name) < 0) readMember(member, -1);
  });
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
  const taggedRule: Rule = (value, path, walk, key) => {
    if (value === undefined || value === null) return;
    const fields = asObject(value, path);
    const name =
      fields[tag] === undefined && fallback !== undefined ? fallback : asString(fields[tag], memberPath(path, tag));
    const rule = rules.get(name);
    if (rule === undefined) countOther(walk, path, key, fields, true);
    else rule(fields, path, walk, key);
  };
  return withTape(taggedRule, (tape, at, path, walk, key) => {
    if (absent(tape, at)) return;
    let name: string | undefined;
    if (tape.kind[at] === TapeKind.Object) {
      const tagAt = memberToken(tape, at, tag);
      if (tagAt < 0) name = fallback;
      else if (tape.kind[tagAt] === TapeKind.String) name = tapeString(tape, tagAt);
    }
    if (name === undefined) return taggedRule(valueAt(tape, at), path, walk, key);
    const rule = rules.get(name);
    if (rule === undefined) countOtherToken(walk, path, key, tape, at, true);
    else onTape(rule)(tape, at, path, walk, key);
  });
}

/** Content the model reads that the gateway cannot measure (e.g. a file id): recorded by path. */
export function unmeasured(what: string): Rule {
  return withTape(
    (value, path, walk) => {
      if (value === undefined || value === null) return;
      walk.call.unmeasured.push({ path, what });
    },
    (tape, at, path, walk) => {
      if (!absent(tape, at)) walk.call.unmeasured.push({ path, what });
    },
  );
}

/** Runs several rules on the same value, e.g. to count a tool and note that the provider expands it. */
export function both(first: Rule, second: Rule): Rule {
  return withTape(
    (value, path, walk, key) => {
      first(value, path, walk, key);
      second(value, path, walk, key);
    },
    (tape, at, path, walk, key) => {
      onTape(first)(tape, at, path, walk, key);
      onTape(second)(tape, at, path, walk, key);
    },
  );
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
export const responseSchema: Rule = withTape(
  capture((call, value, path) => {
    call.responseSchema = optionalObject(value, path);
  }),
  (tape, at, path, walk, key) => {
    if (at >= 0 && tape.kind[at] === TapeKind.Object) walk.call.responseSchema = recurringValue(tape, at);
    else responseSchema(valueAt(tape, at), path, walk, key);
  },
);

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
  const noteUnknown = (scratch: LogicalCall, walk: Walk) => {
    for (const field of scratch.other) if (field.unknown) walk.call.other.push({ ...field, chars: 0 });
  };
  return withTape(
    (value, path, walk, key) => {
      const scratch = emptyCall();
      rule(value, path, { call: scratch, section: walk.section }, key);
      noteUnknown(scratch, walk);
    },
    (tape, at, path, walk, key) => {
      const scratch = emptyCall();
      onTape(rule)(tape, at, path, { call: scratch, section: walk.section }, key);
      noteUnknown(scratch, walk);
    },
  );
}

/** Reads only object values with `rule`; any other value is left to the rules beside it. */
export function objectsOnly(rule: Rule): Rule {
  return withTape(
    (value, path, walk, key) => {
      if (isObject(value)) rule(value, path, walk, key);
    },
    (tape, at, path, walk, key) => {
      if (at >= 0 && tape.kind[at] === TapeKind.Object) onTape(rule)(tape, at, path, walk, key);
    },
  );
}
