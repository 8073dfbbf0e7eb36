import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ConfigError, shown, withoutCredentials } from "../../config.js";
import { redactKeys } from "../../errors/redact-keys.js";
import { memoryStore } from "../../store/memory-store.js";
import type { Store } from "../../store/store.js";
import {
  NewerPostgresSchemaError,
  type PostgresOptions,
  postgresSchemaVersion,
  postgresStore,
} from "./postgres-store.js";
import { NewerSchemaError, schemaVersion, sqliteStore } from "./sqlite-store.js";

/** The fix every database refusal offers besides its own. */
const otherFile = "set PROMPTGATE_DB to a file in a writable folder, or to memory";

/** Where `PROMPTGATE_DB` came from, for opening it and for the messages that refuse it. */
export interface DatabaseSetting {
  /** The value: `memory`, or a SQLite file's path. */
  db: string;
  /** Whether `PROMPTGATE_DB` was set; unset, the default's folder is created when missing. */
  explicit: boolean;
  /** What a relative path is relative to. */
  workingDirectory: string;
}

/** Whether `PROMPTGATE_DB` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * The store `PROMPTGATE_DB` names: `memory`, a PostgreSQL connection string, or a SQLite file. A database that
 * cannot serve (a folder, not a database, read-only, in a missing folder, unreachable, written by a newer
 * promptgate) is a ConfigError saying what to change. Only the default's folder (`./data`) is created: a set
 * path in a missing folder is more likely a typo than a wish for a new folder.
 */
export async function openStore(setting: DatabaseSetting, postgres: PostgresSettings): Promise<Store> {
  if (setting.db === "memory") return memoryStore();
  if (isPostgresUrl(setting.db)) {
    try {
      return await postgresStore({ url: setting.db, ...postgres });
    } catch (error) {
      throw postgresRefusal(setting, error);
    }
  }
  const path = resolve(setting.workingDirectory, setting.db);
  const folder = dirname(path);
  if (statOf(path)?.isDirectory()) {
    const example = join(setting.db, "promptgate.db");
    throw refusal(setting, "is a folder, not a file", `set PROMPTGATE_DB to a file inside it, such as ${example}`);
  }
  const folderStat = statOf(folder);
  if (folderStat !== undefined && !folderStat.isDirectory()) {
    throw refusal(setting, `is in ${folder}, which is a file, not a folder`, otherFile);
  }
  if (folderStat === undefined && setting.explicit) {
    throw refusal(
      setting,
      `is in a folder that does not exist (${folder})`,
      `create it (mkdir -p ${folder}), or ${otherFile}`,
    );
  }
  if (folderStat === undefined) {
    try {
      mkdirSync(folder, { recursive: true });
    } catch (error) {
      const problem = `needs the folder ${folder}, which cannot be created (${codeOf(error)})`;
      throw refusal(setting, problem, `run promptgate from a folder it may write to, or ${otherFile}`);
    }
  }
  try {
    return sqliteStore(path);
  } catch (error) {
    throw databaseRefusal(setting, error);
  }
}

/** A database failure at start-up (opening it, or the first writes) as a ConfigError naming what to change. */
export function databaseRefusal(setting: DatabaseSetting, error: unknown): ConfigError {
  const path = resolve(setting.workingDirectory, setting.db);
  const folder = dirname(path);
  const code = codeOf(error);
  const refuse = (problem: string, fix: string) => refusal(setting, problem, fix);
  if (NewerSchemaError.isInstance(error)) {
    const problem = `was written by a newer promptgate (schema version ${error.stored}; this one knows up to ${schemaVersion})`;
    return refuse(problem, `run the promptgate that wrote it, or ${otherFile}`);
  }
  if (code === "SQLITE_NOTADB")
    return refuse("is not a SQLite database (SQLITE_NOTADB)", `move that file away, or ${otherFile}`);
  if (code === "SQLITE_CORRUPT")
    return refuse("is damaged (SQLITE_CORRUPT)", `restore it from a backup, or ${otherFile}`);
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return refuse(`is locked by another process for longer than 5 s (${code})`, `stop that process, or ${otherFile}`);
  }
  if (code === "SQLITE_FULL" || code === "ENOSPC") {
    return refuse(`cannot grow: the disk is full (${code})`, `free some space, or ${otherFile}`);
  }
  if (existsSync(path) && !writable(path)) {
    return refuse(`is read-only for this user (${code})`, `make it writable (chmod u+w ${path}), or ${otherFile}`);
  }
  if (!writable(folder)) {
    return refuse(
      `is in a folder this user cannot write (${folder}; SQLite keeps its -wal and -shm files beside the database) (${code})`,
      `make the folder writable, or ${otherFile}`,
    );
  }
  // SQLite's messages are fixed text ("unable to open database file"), never the file's content.
  const detail = error instanceof Error ? `${code}: ${error.message}` : code;
  return refuse(
    `cannot be opened (${detail})`,
    `check that the path names a file this user may read and write, or ${otherFile}`,
  );
}

/** A PostgreSQL store's pool and statement settings. */
export type PostgresSettings = Omit<PostgresOptions, "url">;

/** A PostgreSQL database that cannot serve at start-up, as a ConfigError: never its password. */
function postgresRefusal(setting: DatabaseSetting, error: unknown): ConfigError {
  const label = `PROMPTGATE_DB=${shown(withoutCredentials(setting.db))}`;
  if (NewerPostgresSchemaError.isInstance(error)) {
    return new ConfigError(
      `${label} was migrated by a newer promptgate (schema version ${error.stored}; this one knows up to ${postgresSchemaVersion}): run that promptgate, or point PROMPTGATE_DB at another database.`,
    );
  }
  // The server's messages name the database, user or host, never a password; the code says which failure it was.
  const detail =
    error instanceof Error ? `${codeOf(error)}: ${redactKeys(error.message, [setting.db])}` : codeOf(error);
  return new ConfigError(
    `${label} cannot be used (${detail}): check that the server runs and that the user, password and database exist, or set PROMPTGATE_DB to a SQLite file or to memory.`,
  );
}

/** `<the database> <problem>: <fix>.` in one line. */
function refusal(setting: DatabaseSetting, problem: string, fix: string): ConfigError {
  return new ConfigError(`${labelOf(setting)} ${problem}: ${fix}.`);
}

/** Whether an error is SQLite's own (`SQLITE_…`), as opposed to one of the code's. */
export function isSqliteFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_");
}

/** How a refusal names the database: the variable and its value, or the default and where it lies. */
function labelOf(setting: DatabaseSetting): string {
  const path = resolve(setting.workingDirectory, setting.db);
  if (!setting.explicit) {
    return `The database ${setting.db} (PROMPTGATE_DB unset; the working directory is ${setting.workingDirectory})`;
  }
  return `PROMPTGATE_DB=${shown(setting.db)}${isAbsolute(setting.db) ? "" : ` (${path})`}`;
}

function statOf(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** An error's short code (`SQLITE_READONLY`, `EACCES`), or its class. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown error";
}
