import { parse, TomlError } from "smol-toml";
import type { JsonObject } from "../json/json-object.js";
import { PolicyFileError } from "./policy-file-error.js";

/**
 * The table of a TOML file of the policy folder (a policy, the model table, the key file); a syntax error is a
 * `PolicyFileError` naming the file, its line and column, and smol-toml's reason without its code excerpt.
 */
export function parseTomlFile(path: string, text: string): JsonObject {
  try {
    return parse(text) as JsonObject;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const reason = error.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
    throw new PolicyFileError(
      path,
      "(root)",
      `TOML syntax error at line ${error.line}, column ${error.column}: ${reason}`,
    );
  }
}
