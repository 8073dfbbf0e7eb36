import { existsSync } from "node:fs";
import type { CliIo, ExitCode } from "./cli-io.js";
import { replayCommand } from "./replay-command.js";

/** The `--help` text of `promptgate`. */
export const mainHelp = `Usage: promptgate COMMAND [OPTIONS]

Commands:
  replay   replay stored request bodies through the gateway's checks, offline, and
           print one JSON report (promptgate replay --help)

The gateway itself is started with npm start (promptgate's HTTP server).
`;

// A Map, so that a command line naming `constructor` or `toString` finds no command.
const commands = new Map<string, (args: string[], io: CliIo) => Promise<ExitCode>>([["replay", replayCommand]]);

/** Runs one command line (without `node` and the script) and returns its exit code; never throws. */
export async function main(args: string[], io: CliIo): Promise<ExitCode> {
  const [name, ...rest] = args;
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp);
    return 0;
  }
  const command = name === undefined ? undefined : commands.get(name);
  if (command === undefined) {
    io.stderr(
      `${name === undefined ? "promptgate: name a command." : `promptgate: unknown command "${name}".`}\n\n${mainHelp}`,
    );
    return 2;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    io.stderr(`promptgate ${name}: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** The process entry of `bin/promptgate.js`: reads `.env` like the gateway, runs `main`, sets the exit code. */
export async function runCli(): Promise<void> {
  if (existsSync(".env")) process.loadEnvFile(".env");
  process.exitCode = await main(process.argv.slice(2), {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
