import type { PolicyVersion } from "./policy.js";

/** A name in a policy's `validation.schemas` that the gateway has no named schema for. */
export interface MissingListedSchema {
  /** The policy version that lists it, and its file. */
  policy: string;
  file: string;
  /** Where in the file: `validation.schemas[INDEX]`. */
  field: string;
  schema: string;
  /** What it means and what to do, for a log line. */
  message: string;
}

/**
 * The names the policies list as accepted response schemas (`validation.schemas`) that are not among the
 * gateway's named schemas. Such a policy refuses every call that carries a response schema, since no schema can be
 * the missing one; the runtimes log each at start-up and after a reload, so that the operator learns of it then
 * and not from the first refused call. Not a refusal of the file: a folder of one's own schemas
 * (`PROMPTGATE_SCHEMAS`) beside policies that list others still serves every other policy.
 */
export function missingListedSchemas(
  versions: readonly PolicyVersion[],
  known: ReadonlySet<string>,
): MissingListedSchema[] {
  const missing: MissingListedSchema[] = [];
  for (const version of versions) {
    for (const [index, schema] of (version.policy.validation.schemas ?? []).entries()) {
      if (known.has(schema)) continue;
      missing.push({
        policy: version.ref,
        file: version.source,
        field: `validation.schemas[${index}]`,
        schema,
        message:
          `policy ${version.ref} (${version.source}) accepts the named schema ${schema}, which the gateway does not ` +
          `have: its calls with a response schema are refused until ${schema}.json is in the schema folder ` +
          "(PROMPTGATE_SCHEMAS) or the name is removed from validation.schemas",
      });
    }
  }
  return missing;
}
