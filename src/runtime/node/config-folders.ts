import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { packageFolders } from "./package-paths.js";

type Environment = Readonly<Record<string, string | undefined>>;

/** Where a folder of the configuration came from: its variable, the working directory, or the package. */
export type FolderSource = "PROMPTGATE_POLICIES" | "PROMPTGATE_SCHEMAS" | "working directory" | "package";

/** A folder the gateway reads, as an absolute path, and why that one. */
export interface ChosenFolder {
  path: string;
  source: FolderSource;
}

/** The policies and schemas folders chosen, and the environment that makes `readConfig` use them. */
export interface ConfigFolders {
  environment: Environment;
  policies: ChosenFolder;
  schemas: ChosenFolder;
}

/**
 * Chooses the policies and the schemas folder, each on its own: its variable when set, else the folder of
 * that name in the working directory when there is one, else the one the package ships (so that
 * `npx promptgate` serves from any folder). The package's folder is passed on through the variable.
 */
export function chooseConfigFolders(environment: Environment, workingDirectory = process.cwd()): ConfigFolders {
  const chosen = { ...environment };
  const choose = (variable: "PROMPTGATE_POLICIES" | "PROMPTGATE_SCHEMAS", name: "policies" | "schemas") => {
    const configured = environment[variable];
    if (configured) return { path: resolve(workingDirectory, configured), source: variable };
    const local = resolve(workingDirectory, name);
    if (existsSync(local)) return { path: local, source: "working directory" as const };
    chosen[variable] = packageFolders[name];
    return { path: packageFolders[name], source: "package" as const };
  };
  const policies = choose("PROMPTGATE_POLICIES", "policies");
  const schemas = choose("PROMPTGATE_SCHEMAS", "schemas");
  return { environment: chosen, policies, schemas };
}
