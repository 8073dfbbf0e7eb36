/**
 * The soak's command-line options: `--minutes 2 --concurrency 8 --streams 4 --kill-every 30 --half-open 300
 * --schema-lanes 1 --pathological-lanes 1`.
 */
export interface SoakOptions {
  minutes: number;
  /** Lanes of the mixed load. */
  concurrency: number;
  /** Lanes that keep slow streams in flight, for the kills to cut. */
  streams: number;
  /** Seconds between kills, which run from a quarter to 40 % of the soak (default: 30, less in short runs, so that three fit). */
  killEvery: number;
  /** Sockets per half-open phase. */
  halfOpen: number;
  /** Lanes of large new schemas (0 leaves them out, e.g. to tell their share of memory). */
  schemaLanes: number;
  /** Lanes of pathological inputs (0 leaves them out). */
  pathologicalLanes: number;
}

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(process.argv[index + 1]);
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} needs a number of at least 0`);
  return value;
}

export function readOptions(): SoakOptions {
  const minutes = argument("minutes", 2);
  return {
    minutes,
    concurrency: argument("concurrency", 8),
    streams: argument("streams", 4),
    killEvery: argument("kill-every", Math.min(30, (minutes * 60 * 0.15) / 2)),
    halfOpen: argument("half-open", 300),
    schemaLanes: argument("schema-lanes", 1),
    pathologicalLanes: argument("pathological-lanes", 1),
  };
}
