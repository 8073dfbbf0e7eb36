import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What one gateway process's serving thread reported: its event-loop block (ms beyond a 5 ms timer) since it listened. */
export interface LoopDelay {
  pid: number;
  /** Epoch ms of the start (the process listening) and of the report. */
  since: number;
  at: number;
  samples: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/**
 * The gateway's own event-loop delay, measured inside each process by `loop-delay-preload.ts` without a change to
 * the gateway: the node arguments and environment to start a process with, the signal it needs once it listens,
 * and what each process reported.
 */
export function watchGatewayLoop() {
  const directory = mkdtempSync(join(tmpdir(), "promptgate-soak-loop-"));
  return {
    nodeArguments: ["--import", new URL("./loop-delay-preload.ts", import.meta.url).href],
    environment: { SOAK_LOOP_DIR: directory },
    /** What the process measured before it listened was its start: it starts over. */
    listening(pid: number): void {
      process.kill(pid, "SIGUSR2");
    },
    /** The last report of each process that wrote one (a report is at most a second old). */
    read(pids: readonly number[]): LoopDelay[] {
      return pids.flatMap((pid) => {
        try {
          return [
            { pid, ...(JSON.parse(readFileSync(join(directory, `${pid}.json`), "utf8")) as Omit<LoopDelay, "pid">) },
          ];
        } catch {
          return [];
        }
      });
    },
    remove(): void {
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
