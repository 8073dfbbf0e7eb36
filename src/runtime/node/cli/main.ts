import { existsSync } from "node:fs";
import { packageVersion } from "../package-paths.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { initCommand } from "./init-command.js";
import { keysCommand } from "./keys-command.js";
import { mainHelp } from "./main-help.js";
import { replayCommand } from "./replay-command.js";
import { selftestCommand } from "./selftest-command.js";
import { serveCommand } from "./serve-command.js";
import { signatureCommand } from "./signature-command.js";
import { UsageError } from "./usage-error.js";

// A Map, so that a command line naming `constructor` or `toString` finds no command.
const commands = new Map<string, (args: string[], io: CliIo) => Promise<ExitCode>>([
  ["serve", serveCommand],
  ["replay", replayCommand],
  ["init", initCommand],
  ["selftest", selftestCommand],
  ["signature", signatureCommand],
  ["keys", keysCommand],
]);

/**
 * Runs one command line (without `node` and the script) and returns its exit code; never throws. Without a
 * command it serves: `serve` resolves once the gateway listens, which then keeps the process alive.
 */
export async function main(args: string[], io: CliIo): Promise<ExitCode> {
  const [name = "serve", ...rest] = args;
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp);
    return 0;
  }
  if ((name === "--version" || name === "-v") && rest.length === 0) {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  const command = commands.get(name);
  if (command === undefined) {
    const what = name.startsWith("-") ? "option" : "command";
    io.stderr(`promptgate: unknown ${what} "${name}".\n\n${mainHelp}`);
    return 2;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    if (UsageError.isInstance(error)) {
      io.stderr(`promptgate ${name}: ${error.message}\n${name === "serve" ? `\n${mainHelp}` : ""}`);
      return 2;
    }
    io.stderr(`promptgate ${name}: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/**
 * The process entry of `promptgate` and `npm start`: reads `.env` like the gateway, runs `main`, and exits
 * with its code, except after serving successfully, which goes on until a signal stops it.
 */
export async function runCli(): Promise<void> {
  if (existsSync(".env")) process.loadEnvFile(".env");
  const code = await main(process.argv.slice(2), {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
  // Serving keeps the process alive once it listens; every other command is done when it returns, whatever its
  // dependencies left open (the selftest's provider connections, the schema compiler's thread).
  const serving = (process.argv[2] ?? "serve") === "serve";
  if (code !== 0 || !serving) process.exit(code);
}
