import type { Server } from "node:http";

/** At most one warning of a kind per this interval, with a count of what happened since the last one. */
const warningIntervalMs = 60_000;

/**
 * Warns, at most once a minute each, when the connection cap turns connections away and when
 * accepting a connection fails (e.g. out of files); the latter would otherwise be an unhandled
 * 'error' event that ends the process.
 */
export function warnAboutConnections(server: Server, maxConnections: number, warn: (line: string) => void): void {
  const dropped = throttled(
    warn,
    (count) =>
      `promptgate: ${count} new connection(s) refused at the cap of ${maxConnections} open connections ` +
      "(PROMPTGATE_MAX_CONNECTIONS) since the last warning.",
  );
  server.on("drop", dropped);
  let lastError = "";
  const failed = throttled(warn, (count) => `promptgate: accepting ${count} connection(s) failed (${lastError}).`);
  server.on("error", (error: NodeJS.ErrnoException) => {
    lastError = error.code ?? "unknown error";
    failed();
  });
}

function throttled(warn: (line: string) => void, describe: (count: number) => string): () => void {
  let count = 0;
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    count += 1;
    const now = Date.now();
    if (now - last < warningIntervalMs) return;
    warn(describe(count));
    count = 0;
    last = now;
  };
}
