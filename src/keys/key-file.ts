import { TomlDate } from "smol-toml";
import { isObject, type JsonObject } from "../json/json-object.js";
import { sha256Hex } from "../json/sha256-hex.js";
import { closestName } from "../policy/closest-name.js";
import { PolicyFileError } from "../policy/policy-file-error.js";
import { parseTomlFile } from "../policy/toml-file.js";
import {
  type KeySettingsContext,
  KeySettingsError,
  keySettingNames,
  parseDateTime,
  readKeySettings,
} from "./key-settings.js";
import type { FileKey } from "./named-key.js";

/** The file of the policy folder that holds named keys; it is not a policy. */
export const keyFileName = "keys.toml";

/** The pattern a key id given in `keys.toml` matches. */
export const fileKeyIdPattern = /^key_[A-Za-z0-9_-]{1,64}$/;

const secretHashPattern = /^[0-9a-f]{64}$/;

/** The members of a `[[key]]` table: a key's settings, and the file's own `id`, `secret_sha256` and `created_at`. */
const keyTableMembers = ["id", ...keySettingNames, "secret_sha256", "created_at"] as const;

/** What checking the keys of `keys.toml` needs to know of the gateway: the settings' context but the time. */
export type KeyFileContext = Omit<KeySettingsContext, "now">;

/**
 * The id of a key of `keys.toml` that gives none: derived from its name alone, so that its principal (and the state
 * that hangs on it) stays the same across reloads and restarts.
 */
export async function fileKeyId(name: string): Promise<string> {
  return `key_${(await sha256Hex(`file:${name}`)).slice(0, 24)}`;
}

/**
 * Reads and checks `keys.toml`: `[[key]]` tables, each with a key's settings (as the admin API takes them, `name`
 * required, an `expires_at` that has passed allowed), `secret_sha256` (64 lowercase hex digits), and optionally
 * `id` and `created_at`. Ids, names and secrets are unique in the file. Throws a `PolicyFileError` naming the file,
 * the field (e.g. `key[2].team`) and the reason.
 */
export async function parseKeyFile(path: string, text: string, context: KeyFileContext): Promise<FileKey[]> {
  const root = parseTomlFile(path, text);
  for (const member of Object.keys(root)) {
    if (member !== "key") {
      throw new PolicyFileError(path, member, "is not part of a key file, which holds only [[key]] tables");
    }
  }
  if (root.key === undefined) return [];
  if (!Array.isArray(root.key) || !root.key.every(isObject)) {
    throw new PolicyFileError(path, "key", "must be an array of tables ([[key]])");
  }
  const keys: FileKey[] = [];
  const ids = new Map<string, number>();
  const names = new Map<string, number>();
  const secrets = new Map<string, number>();
  for (const [index, table] of (root.key as JsonObject[]).entries()) {
    const field = (member: string) => `key[${index}].${member}`;
    checkMembers(path, table, index);
    const settingsBody: JsonObject = {};
    for (const name of keySettingNames) {
      if (table[name] !== undefined) settingsBody[name] = table[name];
    }
    if (table.expires_at !== undefined)
      settingsBody.expires_at = dateTimeText(path, table.expires_at, field("expires_at"));
    let settings: ReturnType<typeof readKeySettings>;
    try {
      settings = readKeySettings(settingsBody, { ...context, now: 0 }, { kind: "file" });
    } catch (error) {
      if (!KeySettingsError.isInstance(error)) throw error;
      throw new PolicyFileError(path, field(error.field), error.reason);
    }
    const secretSha256 = table.secret_sha256;
    if (typeof secretSha256 !== "string" || !secretHashPattern.test(secretSha256)) {
      throw new PolicyFileError(
        path,
        field("secret_sha256"),
        "must be the SHA-256 of the key's secret as 64 lowercase hex digits (promptgate keys hash prints it)",
      );
    }
    let id: string;
    if (table.id === undefined) id = await fileKeyId(settings.name);
    else if (typeof table.id === "string" && fileKeyIdPattern.test(table.id)) id = table.id;
    else throw new PolicyFileError(path, field("id"), "must be key_ followed by 1 to 64 letters, digits, '_' or '-'");
    let createdAt = 0;
    if (table.created_at !== undefined) {
      createdAt = parseDateTime(dateTimeText(path, table.created_at, field("created_at")))!;
    }
    unique(path, ids, id, index, field("id"), "id");
    unique(path, names, settings.name, index, field("name"), "name");
    unique(path, secrets, secretSha256, index, field("secret_sha256"), "secret");
    keys.push({
      key: { ...settings, id, createdAt, revokedAt: undefined, lastUsedAt: undefined, source: "file" },
      secretSha256,
    });
  }
  return keys;
}

/** Refuses a second key with an id, name or secret that an earlier key of the file has. */
function unique(
  path: string,
  seen: Map<string, number>,
  value: string,
  index: number,
  field: string,
  what: string,
): void {
  const earlier = seen.get(value);
  if (earlier !== undefined) throw new PolicyFileError(path, field, `repeats the ${what} of key[${earlier}]`);
  seen.set(value, index);
}

/**
 * A date-time member as ISO-8601 text: a TOML offset date-time (`2027-01-01T00:00:00Z`) or a string holding one; a
 * local date-time, a date alone or a time alone is refused, since it names no moment.
 */
function dateTimeText(path: string, value: unknown, field: string): string {
  const reason = 'must be a date-time with a time zone, such as 2027-01-01T00:00:00Z or "2027-01-01T00:00:00Z"';
  if (value instanceof TomlDate) {
    if (!value.isDateTime() || value.isLocal() || !value.isValid()) throw new PolicyFileError(path, field, reason);
    return value.toISOString();
  }
  if (typeof value !== "string" || parseDateTime(value) === undefined) throw new PolicyFileError(path, field, reason);
  return value;
}

/** Refuses a member a `[[key]]` table does not take, naming the one it most likely meant. */
function checkMembers(path: string, table: JsonObject, index: number): void {
  for (const member of Object.keys(table)) {
    if ((keyTableMembers as readonly string[]).includes(member)) continue;
    if (member === "secret" || member === "key") {
      const reason = "is not a member of a key: the file holds only the SHA-256 of a secret, as secret_sha256";
      throw new PolicyFileError(path, `key[${index}].${member}`, `${reason} (promptgate keys hash prints it)`);
    }
    const meant = closestName(member, keyTableMembers);
    const hint = meant === undefined ? `a key takes ${keyTableMembers.join(", ")}` : `did you mean ${meant}?`;
    throw new PolicyFileError(path, `key[${index}].${member}`, `is not a member of a key (${hint})`);
  }
}
