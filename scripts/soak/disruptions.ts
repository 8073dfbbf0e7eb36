import type { GatewayChild } from "./gateway-child.js";
import { type HalfOpenFigures, halfOpenPhase } from "./half-open.js";
import type { Shot } from "./shots.js";

/**
 * When a kill strikes: while slow streams are mid-way, or the moment a client has read the final
 * event of a stream that ends with it, or of one that ends later: the instants where an answer the
 * client holds whole could lose its record.
 */
export const killModes = ["mid-stream", "after a final event", "after a late-ending final event"] as const;

/** One SIGKILL of the gateway and its restart. */
export interface Kill {
  /** Soak time of the restart. */
  at: number;
  mode: (typeof killModes)[number];
  /** Slow streams more than 300 ms old when the kill struck. */
  streamsInFlight: number;
  restartMs: number;
}

/** When the disruptions run, in soak time (ms since the load began). */
export interface DisruptionPlan {
  durationMs: number;
  killEveryMs: number;
  /** Slow-stream lanes: a mid-stream kill waits for up to three of their streams to be mid-way. */
  streams: number;
  halfOpenSockets: number;
}

const halfOpenHoldMs = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The soak's disruptions of the gateway: a SIGKILL and restart every `killEveryMs` from 45 s (or a
 * quarter of a short run) to 40 % of the run, so that the last process lives long enough to show its
 * RSS drift; and every minute from 20 s on, a half-open phase. The two never overlap: a half-open
 * phase would count a kill's restart as failed /healthz probes.
 */
export function createDisruptions(gateway: GatewayChild, plan: DisruptionPlan, loadStartedAt: number) {
  const kills: Kill[] = [];
  const halfOpenPhases: HalfOpenFigures[] = [];
  const streamsInFlight = new Set<{ since: number }>();
  let finalEventWatch: { kind: string; resolve: () => void } | undefined;
  let halfOpenRunning: Promise<unknown> | undefined;
  let killing: Promise<unknown> | undefined;
  const midStreams = () => [...streamsInFlight].filter((stream) => performance.now() - stream.since > 300).length;
  const untilSoakTime = (at: number) => sleep(loadStartedAt + at - Date.now());

  /** Waits for the moment `mode` strikes at (or 10 s, whichever comes first). */
  async function killMoment(mode: Kill["mode"]): Promise<void> {
    const waitUntil = Date.now() + 10_000;
    if (mode === "mid-stream") {
      while (midStreams() < Math.min(3, plan.streams) && Date.now() < waitUntil) await sleep(20);
      return;
    }
    const kind = mode === "after a final event" ? "slow-stream" : "slow-stream-late-end";
    await Promise.race([
      new Promise<void>((resolve) => {
        finalEventWatch = { kind, resolve };
      }),
      sleep(waitUntil - Date.now()),
    ]);
    finalEventWatch = undefined;
  }

  async function killLoop(): Promise<void> {
    const first = Math.min(45_000, 0.25 * plan.durationMs);
    for (let at = first; at <= 0.4 * plan.durationMs; at += plan.killEveryMs) {
      await untilSoakTime(at);
      const mode = killModes[kills.length % killModes.length]!;
      // No await between the last check and the kill: a half-open phase cannot start in between.
      do {
        await halfOpenRunning;
        await killMoment(mode);
      } while (halfOpenRunning !== undefined);
      const inFlight = midStreams();
      const killedAt = performance.now();
      killing = gateway.killAndRestart();
      await killing;
      killing = undefined;
      const restartMs = performance.now() - killedAt;
      kills.push({ at: Date.now() - loadStartedAt, mode, streamsInFlight: inFlight, restartMs });
      console.log(
        `  kill ${kills.length} (${mode}): SIGKILL with ${inFlight} streams mid-way; listening again after ${restartMs.toFixed(0)} ms`,
      );
    }
  }

  async function halfOpenLoop(): Promise<void> {
    for (let at = 20_000; at + halfOpenHoldMs <= plan.durationMs; at += 60_000) {
      await untilSoakTime(at);
      const phase = (async () => {
        await killing;
        return halfOpenPhase(await gateway.ready(), plan.halfOpenSockets, halfOpenHoldMs);
      })();
      halfOpenRunning = phase;
      halfOpenPhases.push(await phase);
      halfOpenRunning = undefined;
    }
  }

  return {
    kills,
    halfOpenPhases,
    /** Runs both schedules to their end. */
    run: () => Promise.all([killLoop(), halfOpenLoop()]),
    /** Tells the kill loop about a slow stream from its start; call the returned function at its end. */
    streamStarted(): () => void {
      const stream = { since: performance.now() };
      streamsInFlight.add(stream);
      return () => streamsInFlight.delete(stream);
    },
    /** Tells the kill loop that a client has read a stream's final event. */
    finalEventRead(shot: Shot): void {
      if (finalEventWatch?.kind !== shot.kind) return;
      finalEventWatch.resolve();
      finalEventWatch = undefined;
    },
  };
}
