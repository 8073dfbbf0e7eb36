import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { keyFileName, parseKeyFile } from "../../keys/key-file.js";
import type { FileKey } from "../../keys/named-key.js";
import { surfaceNames } from "../../surfaces/surfaces.js";

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The keys of the policy folder's `keys.toml`, checked against the current policy names and the variables the
 * environment sets; none without the file. Throws a `PolicyFileError` naming the file, field and reason for a file
 * that is not valid, and the file system's error for one that cannot be read.
 */
export async function readKeyFile(
  policiesDir: string,
  policyNames: readonly string[],
  environment: Environment,
): Promise<FileKey[]> {
  const path = join(policiesDir, keyFileName);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const context = {
    policyNames,
    providerNames: surfaceNames,
    credentialSet: (variable: string) => (environment[variable] ?? "") !== "",
  };
  return parseKeyFile(path, text, context);
}
