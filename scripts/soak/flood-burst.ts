import { fire } from "./fire.js";
import type { GatewayChild } from "./gateway-child.js";
import { countStoredCalls } from "./records.js";
import { floodShot } from "./shots.js";

/** What the flood burst at the end saw. */
export interface FloodFigures {
  statuses: ReadonlyMap<string, number>;
  rowsBefore: number;
  rowsAfter: number;
  /** Lines the gateway logged during the burst. */
  logLines: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * 2,000 unauthenticated requests with 7,000-character case and call headers, 16 at a time, with
 * nothing else running: the call table must not grow by a row.
 */
export async function floodBurst(gateway: GatewayChild, database: string): Promise<FloodFigures> {
  await sleep(500);
  const rowsBefore = countStoredCalls(database);
  const logLinesBefore = gateway.counts().logLines;
  const statuses = new Map<string, number>();
  const target = await gateway.ready();
  let sent = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (sent < 2_000) {
        const outcome = await fire(target, floodShot(sent++), 10_000);
        const key = `${outcome.status ?? outcome.failure} ${outcome.code ?? ""}`.trim();
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    }),
  );
  await sleep(500);
  return {
    statuses,
    rowsBefore,
    rowsAfter: countStoredCalls(database),
    logLines: gateway.counts().logLines - logLinesBefore,
  };
}
