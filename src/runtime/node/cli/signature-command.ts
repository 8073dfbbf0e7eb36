import { readFile } from "node:fs/promises";
import { describeSchema } from "../../../window/signature.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { parseCommandArgs } from "./parse-command-args.js";
import { UsageError } from "./usage-error.js";

const usage = "Usage: promptgate signature [--json] SCHEMA.json";

/** The `--help` text of `promptgate signature`. */
export const signatureHelp = `${usage}

Prints a JSON Schema's compact signature (fields, '?' when optional, types with
their bounds, enums, alternatives) and a form example labelled as such, for a prompt to
carry instead of the schema; the schema itself stays the validator. Then the sizes, in
code points as the gateway counts: signature, form example, and the schema's compact JSON.

  --json      print one JSON object instead (signature, form_example and the three sizes)
  -h, --help  show this text
`;

/** Runs `promptgate signature FILE`: reads the schema, prints its signature and form example. */
export async function signatureCommand(args: string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseCommandArgs(args, { json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, usage);
  if (parsed.values.help) {
    io.stdout(signatureHelp);
    return 0;
  }
  const [file, ...more] = parsed.positionals;
  if (file === undefined || more.length > 0) throw new UsageError(`Name one schema file.\n${usage}`);
  let schema: unknown;
  try {
    schema = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file} is not a readable JSON file (${error instanceof Error ? error.message : error}).`);
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new UsageError(`${file} does not hold a JSON Schema object.`);
  }
  const described = describeSchema(schema);
  if (parsed.values.json) {
    io.stdout(`${JSON.stringify(described, null, 2)}\n`);
    return 0;
  }
  const share = Math.round((100 * described.signature_chars) / described.schema_chars);
  io.stdout(
    `${described.signature}\n\n${described.form_example}\n\n` +
      `signature ${described.signature_chars} characters (${share} % of the schema's ${described.schema_chars}), form example ${described.form_example_chars}\n`,
  );
  return 0;
}
