import type { NodeGateway, Shutdown } from "./node-gateway.js";

/** What stopping the process does besides draining: write a line for a person, and exit. */
export interface ProcessExit {
  write(line: string): void;
  exit(code: number): void;
}

const processExit: ProcessExit = {
  write: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => process.exit(code),
};

/** Where the signals come from: the process, or an emitter in tests. */
type Signals = Pick<NodeJS.EventEmitter, "on">;

/**
 * Drains and stops the gateway on the first SIGTERM or SIGINT of `signals`; a second one cuts the drain short.
 * SIGHUP of `hangups` (the process itself unless a test says otherwise: stop signals may come through a filter)
 * reloads the policy folder until a stop begins; the reload logs how it went. Without a listener, SIGHUP would
 * end the process.
 */
export function stopOnSignals(
  gateway: Pick<NodeGateway, "shutdown" | "config"> & Partial<Pick<NodeGateway, "reloadPolicies">>,
  exit: ProcessExit = processExit,
  signals: Signals = process,
  hangups: Signals = process,
): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      void gateway.shutdown(0);
      return;
    }
    stopping = true;
    void stopGateway(gateway, signal, exit);
  };
  signals.on("SIGTERM", stop);
  signals.on("SIGINT", stop);
  const { reloadPolicies } = gateway;
  if (reloadPolicies !== undefined) {
    hangups.on("SIGHUP", () => {
      // The reload's log line says how it went, a failure included.
      if (!stopping) reloadPolicies("SIGHUP").catch(() => {});
    });
  }
}

/**
 * Drains the gateway, writes one line about it and exits: 0 once every record is committed and
 * the store closed, 1 when the store could not be closed.
 */
export async function stopGateway(
  gateway: Pick<NodeGateway, "shutdown" | "config">,
  signal: string,
  exit: ProcessExit,
): Promise<void> {
  try {
    const shutdown = await gateway.shutdown();
    exit.write(describeShutdown(signal, shutdown, gateway.config.server.drainMs));
    exit.exit(0);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    exit.write(`promptgate stopped on ${signal}, but its state store could not be closed: ${reason}`);
    exit.exit(1);
  }
}

/** The shutdown line, e.g. `promptgate stopped on SIGTERM after 4.9 s: 1 request in flight finished; records committed.` */
export function describeShutdown(signal: string, shutdown: Shutdown, drainMs: number): string {
  const { requests, cutOff, elapsedMs } = shutdown;
  const finished = requests - cutOff;
  const plural = (count: number) => `${count} request${count === 1 ? "" : "s"}`;
  const what =
    requests === 0
      ? "no requests were in flight"
      : cutOff === 0
        ? `${plural(requests)} in flight finished`
        : `${finished} of ${plural(requests)} in flight finished, ${cutOff} cut off at the ${drainMs / 1000} s drain limit (PROMPTGATE_DRAIN_SECONDS)`;
  return `promptgate stopped on ${signal} after ${(elapsedMs / 1000).toFixed(1)} s: ${what}; records committed.`;
}
