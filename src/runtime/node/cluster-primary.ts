import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { type Config, ConfigError } from "../../config.js";
import type { ExitCode } from "./cli/cli-io.js";

/** How many processes `PROMPTGATE_WORKERS` asks for: its number, or one per core for `auto`. */
export function workerCountOf(config: Pick<Config, "workers" | "db">): number {
  const count = config.workers === "auto" ? availableParallelism() : config.workers;
  if (count > 1 && config.db === "memory") {
    throw new ConfigError(
      `PROMPTGATE_WORKERS=${config.workers} with PROMPTGATE_DB=memory would give each process a state of its own: set PROMPTGATE_DB to a SQLite file or a postgres:// database, or run one worker.`,
    );
  }
  return count;
}

/** Where the primary writes its lines for a person, and the signals it forwards. */
export interface PrimaryIo {
  stderr(text: string): void;
  /** SIGTERM and SIGINT. */
  signals: Pick<NodeJS.EventEmitter, "on">;
  /** SIGHUP. */
  hangups: Pick<NodeJS.EventEmitter, "on">;
}

/** What the primary uses of `node:cluster`; a test gives a fake. */
export type PrimaryCluster = Pick<typeof cluster, "fork" | "on">;

/**
 * The primary of `PROMPTGATE_WORKERS=N`: forks N gateway processes that share one port (`node:cluster` hands the
 * listening socket to each), and restarts one that dies after it listened, saying so. A worker that ends before it
 * listens is a start-up failure (its own line says why): the others are stopped and the primary ends with 1, rather
 * than restart a configuration that cannot work. SIGTERM and SIGINT are passed to every worker, which drains and
 * commits its records as a single gateway does (a second one cuts the drains short); SIGHUP is passed on as a
 * reload. Resolves with 0 once every worker ended cleanly after a stop, else 1.
 *
 * The workers alive are counted here, not read from `cluster.workers`: Node keeps a worker there until its IPC
 * channel has closed as well, which may come after its `exit` event, and the last `exit` would then find a worker
 * left and never resolve (the process ended with 13, an unsettled top-level await).
 */
export function runPrimary(
  count: number,
  environment: Record<string, string | undefined>,
  io: PrimaryIo,
  workers: PrimaryCluster = cluster,
): Promise<ExitCode> {
  const alive = new Set<Worker>();
  const listened = new Set<Worker>();
  let stopping = false;
  let failed = false;
  let announced = false;
  const fork = () => {
    alive.add(workers.fork(environment));
  };
  return new Promise((resolve) => {
    const stopAll = (signal: NodeJS.Signals) => {
      for (const worker of alive) worker.process.kill(signal);
    };
    workers.on("listening", (worker) => {
      listened.add(worker);
      if (listened.size === count && !stopping && !announced) {
        announced = true;
        io.stderr(`promptgate runs ${count} worker processes on one port (PROMPTGATE_WORKERS).\n`);
      }
    });
    workers.on("exit", (worker, code, signal) => {
      alive.delete(worker);
      const how = signal === null ? `code ${code}` : signal;
      if (!stopping && !listened.has(worker)) {
        io.stderr(`promptgate cannot start: worker ${worker.process.pid} ended (${how}) before it listened.\n`);
        stopping = true;
        failed = true;
        stopAll("SIGTERM");
      } else if (!stopping) {
        io.stderr(`promptgate worker ${worker.process.pid} ended (${how}); starting another.\n`);
        listened.delete(worker);
        fork();
        return;
      } else if (code !== 0) {
        failed = true;
      }
      if (alive.size === 0) resolve(failed ? 1 : 0);
    });
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      io.signals.on(signal, () => {
        stopping = true;
        stopAll(signal);
      });
    }
    io.hangups.on("SIGHUP", () => {
      if (!stopping) stopAll("SIGHUP");
    });
    for (let index = 0; index < count; index += 1) fork();
  });
}
