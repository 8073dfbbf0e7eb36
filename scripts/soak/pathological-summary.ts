import type { HealthzFigures } from "./healthz-watch.js";
import type { LoopDelay } from "./loop-delay.js";
import { pathologicalKinds, pathologicalSizes } from "./pathological-shots.js";
import { fixed, percentile, type Verdict } from "./report.js";
import type { Tally } from "./tally.js";

/** How the event loops fared over the load: the gateway's from inside and from outside, and the soak's own. */
export interface BlockFigures {
  /** Each gateway process's serving thread, from listening to its last report. */
  gatewayLoop: readonly LoopDelay[];
  healthz: HealthzFigures;
  /** The soak's main thread (its clients and the fake upstream), which times the shots. */
  soakLoop: { p99: number; max: number };
}

/** The bound on the block of one request. */
const blockBoundMs = 100;

const latencies = (values: readonly number[]) =>
  `p50 ${fixed(percentile(values, 50))} ms, p99 ${fixed(percentile(values, 99))} ms, max ${fixed(percentile(values, 100))} ms`;

function answersOf(tally: Tally, kind: string): string {
  const answers = [...tally.byClass]
    .filter(([key]) => key.startsWith(`${kind} → `))
    .map(([key, value]) => `${key.slice(kind.length + 3)} × ${value}`);
  return answers.join(", ") || "none";
}

/** Prints the pathological shots by kind (answers and times) and the event-loop figures. */
export function printBlockFigures(tally: Tally, blocks: BlockFigures): void {
  const sizes = pathologicalSizes;
  console.log(
    `\npathological lane: union-chain schema ${sizes.unionChainSchemaChars} characters, signature body ${sizes.signatureBodyChars}, ` +
      `large result ${sizes.largeResultChars}, context bodies ${sizes.contextBodyChars} (${sizes.contextChunks} chunks) ` +
      `and ${sizes.contextAtCapsBodyChars} (${sizes.contextAtCapsChunks} chunks, at the caps)`,
  );
  for (const kind of pathologicalKinds) {
    const times = tally.durations.get(kind);
    if (times === undefined) continue;
    const over = times.filter((ms) => ms > blockBoundMs).length;
    console.log(`  ${kind.padEnd(26)} ${answersOf(tally, kind)}; ${latencies(times)}; ${over} over ${blockBoundMs} ms`);
  }
  for (const loop of blocks.gatewayLoop) {
    console.log(
      `gateway pid ${loop.pid} event-loop block over ${fixed((loop.at - loop.since) / 1000, 0)} s (${loop.samples} samples): ` +
        `p50 ${fixed(loop.p50)} ms, p99 ${fixed(loop.p99)} ms, p99.9 ${fixed(loop.p999)} ms, max ${fixed(loop.max)} ms`,
    );
  }
  const { healthz } = blocks;
  console.log(
    `/healthz every ${healthz.intervalMs} ms: ${healthz.latencies.length} answered, ${latencies(healthz.latencies)}; ` +
      `${healthz.failures} failed; ${healthz.duringKills} during kills apart`,
  );
  console.log(
    `soak's own event-loop block: p99 ${fixed(blocks.soakLoop.p99)} ms, max ${fixed(blocks.soakLoop.max)} ms`,
  );
}

/** The pathological lane's criteria: the reproductions answered as expected, and the event loop not blocked meanwhile. */
export function blockCriteria(tally: Tally, blocks: BlockFigures): Verdict[] {
  const total = pathologicalKinds.reduce((sum, kind) => sum + (tally.durations.get(kind)?.length ?? 0), 0);
  const wrong = pathologicalKinds.reduce((sum, kind) => sum + (tally.wrong.get(kind) ?? 0), 0);
  const loops = blocks.gatewayLoop;
  const worstP99 = Math.max(...loops.map((loop) => loop.p99));
  const max = Math.max(...loops.map((loop) => loop.max));
  const { healthz } = blocks;
  const healthzP99 = percentile(healthz.latencies, 99);
  return [
    {
      name: "pathological inputs: refused or answered as expected, no 5xx, no hang",
      measured: total === 0 ? "none sent" : `${wrong} of ${total} otherwise`,
      pass: wrong === 0,
    },
    {
      name: `gateway event-loop block p99 under ${blockBoundMs} ms (every process)`,
      measured:
        loops.length === 0
          ? "no process reported"
          : `worst p99 ${fixed(worstP99)} ms of ${loops.length} processes, max ${fixed(max)} ms`,
      pass: loops.length > 0 && worstP99 < blockBoundMs,
    },
    {
      name: `/healthz p99 under ${blockBoundMs} ms all run (outside kills)`,
      measured: `${healthz.latencies.length} probes: ${latencies(healthz.latencies)}; ${healthz.failures} failed`,
      pass: healthz.latencies.length > 0 && healthz.failures === 0 && healthzP99 < blockBoundMs,
    },
  ];
}
