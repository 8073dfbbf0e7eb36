import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// This module is src/runtime/node/package-paths.ts, or dist/runtime/node/package-paths.js once built: the
// package's root is three folders up either way (as for the SQLite store's migrations/).
const packageRoot = new URL("../../../", import.meta.url);

/** The folders the package ships beside its code: its policies and its schemas. */
export const packageFolders = {
  policies: fileURLToPath(new URL("policies", packageRoot)),
  schemas: fileURLToPath(new URL("schemas", packageRoot)),
} as const;

/**
 * The meta-schema every policy file is validated against. Always the package's own, wherever
 * `PROMPTGATE_SCHEMAS` points: it belongs to this version of the code, not to the user's schemas.
 */
export const policySchemaPath = fileURLToPath(new URL("schemas/policy.schema.json", packageRoot));

/** The version in the package's package.json. */
export function packageVersion(): string {
  const manifest: { version?: unknown } = JSON.parse(readFileSync(new URL("package.json", packageRoot), "utf8"));
  return typeof manifest.version === "string" ? manifest.version : "unknown";
}
