import { isObject, type JsonObject } from "../json/json-object.js";
import { closestName } from "../policy/closest-name.js";
import { limitNames } from "../policy/policy.js";
import type { KeySettings } from "./named-key.js";

/** The members a key's settings take on the wire (the admin API's JSON, the CLI, `keys.toml`). */
export const keySettingNames = ["name", "team", "policies", "models", "credentials", "expires_at", "limits"] as const;

/** The pattern a team label matches. */
export const teamPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The pattern the name of a credential's environment variable matches. */
export const credentialVariablePattern = /^[A-Z_][A-Z0-9_]*$/;

/** The most globs a key's `models` holds, and the longest one. */
export const maxModelGlobs = 100;
export const maxModelGlobLength = 200;

/** The longest name a key may have, in characters (code points). */
export const maxKeyNameLength = 100;

/** A key setting that cannot be taken: which field (a path such as `policies[1]`), and why. */
export class KeySettingsError extends Error {
  override readonly name = "KeySettingsError";

  constructor(
    /** The member at fault, as a path of member names and indices; `(root)` for the whole body. */
    readonly field: string,
    /** Why, as a sentence ending that follows the field's name (e.g. `must be a string`). */
    readonly reason: string,
  ) {
    super(field === "(root)" ? reason : `${field} ${reason}`);
  }

  static isInstance(value: unknown): value is KeySettingsError {
    return value instanceof KeySettingsError;
  }
}

/** What checking a key's settings needs to know of the gateway. */
export interface KeySettingsContext {
  /** The policy names a key may name (the current policies). */
  policyNames: readonly string[];
  /** The providers a key's `credentials` may name (the surfaces' names). */
  providerNames: readonly string[];
  /** Whether an environment variable (Workers: a secret binding) is set; never its value. */
  credentialSet(variable: string): boolean;
  /** The current time (epoch milliseconds), against which a new key's `expires_at` must lie in the future. */
  now: number;
}

/**
 * How the settings are read: `create` for a new key (`name` required, `expires_at` in the future); `update` for a
 * change to `current`, whose given members replace the key's (`null` clears an optional one); `file` for a key of
 * `keys.toml` (`name` required, `expires_at` may have passed: the file outlives the moment it was written).
 */
export type KeySettingsMode = { kind: "create" } | { kind: "update"; current: KeySettings } | { kind: "file" };

/**
 * Reads and checks a key's settings from a JSON object; throws a `KeySettingsError` naming the first member at fault
 * and why. Only the members present are checked: an update leaves the others as they are.
 */
export function readKeySettings(body: unknown, context: KeySettingsContext, mode: KeySettingsMode): KeySettings {
  if (!isPlainObject(body)) throw new KeySettingsError("(root)", "The key's settings must be a JSON object.");
  checkMembers(body);
  const settings: KeySettings =
    mode.kind === "update"
      ? { ...mode.current }
      : {
          name: "",
          team: undefined,
          policies: [],
          models: [],
          credentials: {},
          limits: undefined,
          expiresAt: undefined,
        };
  if (mode.kind !== "update" && body.name === undefined) throw new KeySettingsError("name", "is required");
  if (body.name !== undefined) settings.name = keyName(body.name);
  if (body.team !== undefined) settings.team = body.team === null ? undefined : team(body.team);
  if (body.policies !== undefined) settings.policies = body.policies === null ? [] : policies(body.policies, context);
  if (body.models !== undefined) settings.models = body.models === null ? [] : models(body.models);
  if (body.credentials !== undefined) {
    settings.credentials = body.credentials === null ? {} : credentials(body.credentials, context);
  }
  if (body.expires_at !== undefined) {
    settings.expiresAt =
      body.expires_at === null ? undefined : expiresAt(body.expires_at, mode.kind === "create" ? context.now : null);
  }
  if (body.limits !== undefined) settings.limits = body.limits === null ? undefined : limits(body.limits);
  return settings;
}

/** Whether a value is an object of members (JSON's, or a TOML table), not an array, a date or another class's. */
function isPlainObject(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Refuses a member the settings do not take, naming the one it most likely meant. */
function checkMembers(body: JsonObject): void {
  for (const member of Object.keys(body)) {
    if ((keySettingNames as readonly string[]).includes(member)) continue;
    const meant = closestName(member, keySettingNames);
    const hint = meant === undefined ? `a key takes ${keySettingNames.join(", ")}` : `did you mean ${meant}?`;
    throw new KeySettingsError(member, `is not a setting of a key (${hint})`);
  }
}

function keyName(value: unknown): string {
  if (typeof value !== "string") throw new KeySettingsError("name", "must be a string");
  const length = Array.from(value).length;
  if (length < 1 || length > maxKeyNameLength) {
    throw new KeySettingsError("name", `must be 1 to ${maxKeyNameLength} characters long`);
  }
  if (hasControlCharacter(value)) throw new KeySettingsError("name", "must not contain control characters");
  return value;
}

function hasControlCharacter(text: string): boolean {
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

function team(value: unknown): string {
  if (typeof value !== "string" || !teamPattern.test(value)) {
    throw new KeySettingsError(
      "team",
      "must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit (or null for none)",
    );
  }
  return value;
}

function policies(value: unknown, context: KeySettingsContext): string[] {
  const names = uniqueStrings(value, "policies", "policy names");
  for (const [index, name] of names.entries()) {
    if (context.policyNames.includes(name)) continue;
    const meant = closestName(name, context.policyNames);
    const known = context.policyNames.length === 0 ? "none" : [...context.policyNames].sort().join(", ");
    const hint = meant === undefined ? `known policies: ${known}` : `did you mean "${meant}"?`;
    throw new KeySettingsError(`policies[${index}]`, `names no known policy ("${name}"; ${hint})`);
  }
  return names;
}

function models(value: unknown): string[] {
  const globs = uniqueStrings(value, "models", "model globs");
  if (globs.length > maxModelGlobs) throw new KeySettingsError("models", `must hold at most ${maxModelGlobs} globs`);
  for (const [index, glob] of globs.entries()) {
    if (glob === "") throw new KeySettingsError(`models[${index}]`, "must not be empty");
    if (Array.from(glob).length > maxModelGlobLength) {
      throw new KeySettingsError(`models[${index}]`, `must be at most ${maxModelGlobLength} characters long`);
    }
  }
  return globs;
}

/** An array of strings, each once; `what` names them in the refusal. */
function uniqueStrings(value: unknown, field: string, what: string): string[] {
  if (!Array.isArray(value)) throw new KeySettingsError(field, `must be an array of ${what}`);
  const seen = new Set<string>();
  for (const [index, item] of value.entries()) {
    if (typeof item !== "string") throw new KeySettingsError(`${field}[${index}]`, "must be a string");
    if (seen.has(item)) throw new KeySettingsError(`${field}[${index}]`, "repeats an earlier entry");
    seen.add(item);
  }
  return [...seen];
}

function credentials(value: unknown, context: KeySettingsContext): Record<string, string> {
  if (!isPlainObject(value)) {
    throw new KeySettingsError("credentials", "must be an object from a provider name to an environment variable name");
  }
  const result: Record<string, string> = {};
  for (const [provider, variable] of Object.entries(value)) {
    const field = `credentials.${provider}`;
    if (!context.providerNames.includes(provider)) {
      const meant = closestName(provider, context.providerNames);
      const hint = meant === undefined ? `providers: ${context.providerNames.join(", ")}` : `did you mean ${meant}?`;
      throw new KeySettingsError(field, `is not a provider (${hint})`);
    }
    if (typeof variable !== "string" || !credentialVariablePattern.test(variable)) {
      throw new KeySettingsError(
        field,
        "must name an environment variable: capital letters, digits and '_', not starting with a digit",
      );
    }
    if (variable.startsWith("PROMPTGATE_")) {
      throw new KeySettingsError(field, `names ${variable}: a PROMPTGATE_ variable cannot hold a credential`);
    }
    if (!context.credentialSet(variable)) {
      throw new KeySettingsError(field, `names ${variable}, which is not set in the gateway's environment`);
    }
    result[provider] = variable;
  }
  return result;
}

const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An ISO-8601 date-time with a time zone (`Z` or an offset) as epoch milliseconds; undefined for anything else,
 * including a calendar date that does not exist (February 30th).
 */
export function parseDateTime(text: string): number | undefined {
  const match = dateTimePattern.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? "0")) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  const offset = match[7]!;
  if (offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return undefined;
  const time = Date.parse(text);
  return Number.isNaN(time) ? undefined : time;
}

/** `expires_at` as epoch milliseconds; after `notBefore` when it is given. */
function expiresAt(value: unknown, notBefore: number | null): number {
  const time = typeof value === "string" ? parseDateTime(value) : undefined;
  if (time === undefined) {
    throw new KeySettingsError(
      "expires_at",
      'must be an ISO-8601 date-time with a time zone, such as "2027-01-01T00:00:00Z" (or null for never)',
    );
  }
  if (notBefore !== null && time <= notBefore) throw new KeySettingsError("expires_at", "must lie in the future");
  return time;
}

function limits(value: unknown): Record<string, number> {
  if (!isPlainObject(value)) {
    throw new KeySettingsError("limits", `must be an object of limits (${limitNames.join(", ")}), or null for none`);
  }
  const result: Record<string, number> = {};
  for (const [name, limit] of Object.entries(value)) {
    const field = `limits.${name}`;
    if (!(limitNames as readonly string[]).includes(name)) {
      const meant = closestName(name, limitNames);
      const hint = meant === undefined ? `a key takes ${limitNames.join(", ")}` : `did you mean ${meant}?`;
      throw new KeySettingsError(field, `is not a limit (${hint})`);
    }
    if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
      throw new KeySettingsError(field, "must be a positive integer");
    }
    result[name] = limit;
  }
  return result;
}
