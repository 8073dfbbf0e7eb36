import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./usage-error.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** A command's options and positionals, strictly parsed; anything else is a usage error followed by `usage`. */
export function parseCommandArgs<const O extends Options>(
  args: string[],
  options: O,
  usage: string,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  }
}
