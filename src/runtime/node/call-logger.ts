import { type DestinationStream, pino } from "pino";
import type { LogLevel } from "../../config.js";
import { type LogEntry, logLines } from "../../record/log-entry.js";

/**
 * The Node runtime's log through pino, to stdout unless a destination is given (tests capture the
 * lines): one JSON line per call, one per internal error (at `error`, with its redacted stack), and a
 * count of requests refused before authentication at most once a minute. A line holds only what its
 * type holds; the redaction paths guard against a credential ever being added to one by mistake.
 */
export function callLogger(level: LogLevel, destination?: DestinationStream): (entry: LogEntry) => void {
  const options = {
    level,
    base: { service: "promptgate" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: ["authorization", "key", "api_key", "headers", "*.authorization", "*.key"], remove: true },
  };
  const logger = destination === undefined ? pino(options) : pino(options, destination);
  const linesOf = logLines();
  return (entry) => {
    const written = linesOf(entry, Date.now());
    if (written !== undefined) logger[written.level](written.line, written.message);
  };
}
