import cluster from "node:cluster";
import { readConfig } from "../../../config.js";
import type { PolicyRegistry } from "../../../policy/policy-registry.js";
import { runPrimary, workerCountOf } from "../cluster-primary.js";
import { chooseConfigFolders } from "../config-folders.js";
import { startNodeGateway, startUpRelayRefusal } from "../node-gateway.js";
import { packageVersion } from "../package-paths.js";
import { startupLine, writeStartupLine } from "../startup-line.js";
import { stopOnSignals } from "../stop-on-signals.js";
import type { CliIo, ExitCode } from "./cli-io.js";
import { mainHelp } from "./main-help.js";
import { deduplicatedSignals } from "./process-signals.js";
import { UsageError } from "./usage-error.js";

/**
 * Runs `promptgate serve`: starts the gateway, writes the start-up line and stops on SIGTERM or SIGINT.
 * Resolves 0 once it listens (the server keeps the process alive), or 1 after the one line saying why it
 * cannot start.
 */
export async function serveCommand(args: string[], io: CliIo): Promise<ExitCode> {
  if (parseServeArgs(args) === "help") {
    io.stdout(mainHelp);
    return 0;
  }
  const folders = chooseConfigFolders(io.env);
  try {
    if (cluster.isPrimary) {
      const config = readConfig(folders.environment);
      // Refused here too, so that a primary does not fork workers that each refuse.
      const relay = await startUpRelayRefusal(folders.environment);
      if (relay !== undefined) throw relay;
      const count = workerCountOf(config);
      if (count > 1) {
        const signals = deduplicatedSignals();
        return await runPrimary(count, folders.environment, { stderr: io.stderr, signals, hangups: process });
      }
    }
    // Listened to before the gateway starts. A stop signal must never meet Node's default, which ends the process
    // on the spot: not one sent the moment the start-up line appears (a supervisor may), and not one sent while
    // the gateway starts, which stops it once it is up.
    const signals = deduplicatedSignals();
    let early: NodeJS.Signals | undefined;
    const noteEarly = (signal: NodeJS.Signals) => {
      early ??= signal;
    };
    signals.on("SIGTERM", noteEarly);
    signals.on("SIGINT", noteEarly);
    const gateway = await startNodeGateway(folders.environment);
    signals.off("SIGTERM", noteEarly);
    signals.off("SIGINT", noteEarly);
    stopOnSignals(gateway, undefined, signals);
    const line = startupLine({
      url: gateway.url,
      version: packageVersion(),
      config: gateway.config,
      folders,
      policies: currentVersions(gateway.policies),
    });
    writeStartupLine(line, gateway.config);
    if (early !== undefined) signals.emit(early, early);
    return 0;
  } catch (error) {
    io.stderr(`promptgate cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function parseServeArgs(args: string[]): "help" | "serve" {
  if (args.length === 0) return "serve";
  if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) return "help";
  const unknown = args.find((arg) => arg !== "--help" && arg !== "-h");
  throw new UsageError(`unknown argument "${unknown}": serve takes none, the environment configures it.`);
}

/** The versions plain policy names resolve to, without the earlier ones kept for pinned references. */
function currentVersions(policies: PolicyRegistry) {
  return policies.list().filter((version) => policies.resolve(version.policy.name) === version);
}
