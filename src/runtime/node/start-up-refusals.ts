import { isAbsolute, resolve } from "node:path";
import { type Config, ConfigError, shown } from "../../config.js";
import type { PolicyVersion } from "../../policy/policy.js";
import { listedNames } from "../../policy/policy-registry.js";
import type { DatabaseSetting } from "./open-store.js";

type Environment = Readonly<Record<string, string | undefined>>;

/** The refusals of one start, knowing which variables were set and the working directory. */
export function startUpRefusal(environment: Environment, workingDirectory = process.cwd()) {
  const variables = { policies: "PROMPTGATE_POLICIES", schemas: "PROMPTGATE_SCHEMAS" } as const;
  return {
    /** Rethrows a failure to read a configuration folder as its refusal; a ConfigError passes as it is. */
    folder:
      (kind: "policies" | "schemas", folder: string) =>
      (error: unknown): never => {
        if (error instanceof ConfigError) throw error;
        const variable = variables[kind];
        throw unreadableFolder({
          kind,
          folder,
          variable,
          set: Boolean(environment[variable]),
          workingDirectory,
          error,
        });
      },
    defaultPolicy: (config: Config, versions: readonly PolicyVersion[]): ConfigError =>
      unknownDefaultPolicy({
        value: config.defaultPolicy,
        set: Boolean(environment.PROMPTGATE_DEFAULT_POLICY),
        names: versions.map((version) => version.policy.name),
        policiesDir: isAbsolute(config.policiesDir)
          ? config.policiesDir
          : `${config.policiesDir} (${resolve(workingDirectory, config.policiesDir)})`,
      }),
    database: (db: string): DatabaseSetting => ({ db, explicit: Boolean(environment.PROMPTGATE_DB), workingDirectory }),
  };
}

/** A configuration folder the gateway could not read, and how it came to look there. */
export interface UnreadableFolder {
  kind: "policies" | "schemas";
  /** The folder as configured (absolute, or relative to `workingDirectory`). */
  folder: string;
  variable: "PROMPTGATE_POLICIES" | "PROMPTGATE_SCHEMAS";
  /** Whether the variable was set; unset, `folder` is the default. */
  set: boolean;
  workingDirectory: string;
  /** What reading it failed with. */
  error: unknown;
}

const contents = {
  policies: "the policy files (*.toml)",
  schemas: "the named JSON Schemas (*.json)",
};

/**
 * The refusal of a policies or schemas folder that is missing, not a folder, or unreadable: which folder
 * was looked for and why there (the variable, or the default relative to the working directory), and
 * what to set.
 */
export function unreadableFolder(failure: UnreadableFolder): ConfigError {
  const { kind, folder, variable, set, workingDirectory } = failure;
  const absolute = resolve(workingDirectory, folder);
  const where = isAbsolute(folder) ? folder : `${folder}, relative to the working directory ${workingDirectory}`;
  const label = set ? `${variable}=${shown(folder)}` : `The ${kind} folder ${where} (${variable} unset)`;
  const code = codeOf(failure.error);
  const failedPath = (failure.error as { path?: unknown } | null)?.path;
  if (typeof failedPath === "string" && resolve(workingDirectory, failedPath) !== absolute) {
    // The folder was listed, one of its files could not be read.
    return new ConfigError(
      `${failedPath}, in the ${kind} folder, cannot be read (${code}): give this user read access to it, or move it out of ${folder}.`,
    );
  }
  const problem =
    code === "ENOENT"
      ? set && !isAbsolute(folder)
        ? `names no folder (${absolute} does not exist)`
        : "does not exist"
      : code === "ENOTDIR"
        ? "is a file, not a folder"
        : code === "EACCES" || code === "EPERM"
          ? `cannot be read by this user (${code})`
          : `cannot be read (${code})`;
  const fix = set
    ? `set ${variable} to the folder that holds ${contents[kind]}`
    : `run promptgate from the folder that holds ${kind}/, or set ${variable} to the folder that holds ${contents[kind]}`;
  return new ConfigError(`${label} ${problem}: ${fix}.`);
}

/** The refusal of a default policy that names none of the loaded policies. */
export interface UnknownDefaultPolicy {
  /** The default policy's name, as set or the built-in `default`. */
  value: string;
  set: boolean;
  /** The names of the policies the folder holds. */
  names: readonly string[];
  /** The policies folder as a message names it. */
  policiesDir: string;
}

/** Names the default policy looked for, the folder looked in, and the names it could be instead. */
export function unknownDefaultPolicy({ value, set, names, policiesDir }: UnknownDefaultPolicy): ConfigError {
  const label = set
    ? `PROMPTGATE_DEFAULT_POLICY=${shown(value)} names no policy in ${policiesDir}`
    : `PROMPTGATE_DEFAULT_POLICY is unset, so the default policy is ${shown(value)}, but ${policiesDir} holds no policy of that name`;
  if (names.length === 0) {
    return new ConfigError(
      `${label}: the folder holds no policy files (*.toml); add one (promptgate init copies the shipped ones), or set PROMPTGATE_POLICIES to a folder that holds them.`,
    );
  }
  const known = listedNames(names);
  const fix = set
    ? `set it to one of ${known}`
    : `add a policy named ${shown(value)}, or set PROMPTGATE_DEFAULT_POLICY to one of ${known}`;
  return new ConfigError(`${label}: ${fix}.`);
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown error";
}
