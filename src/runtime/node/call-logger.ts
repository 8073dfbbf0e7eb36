import { type DestinationStream, type Logger, pino } from "pino";
import { prettyFactory } from "pino-pretty";
import type { Config } from "../../config.js";
import { withoutCredentialFields } from "../../record/credential-fields.js";
import { type LogEntry, logLines } from "../../record/log-entry.js";

/** What decides how the Node log writes: `PROMPTGATE_LOG` and `PROMPTGATE_LOG_FORMAT`. */
export type LogSettings = Pick<Config, "logLevel" | "logFormat">;

/**
 * The Node runtime's pino logger, to stdout unless a destination is given (tests capture the lines):
 * one JSON object per line, or, with `PROMPTGATE_LOG_FORMAT=pretty` or unset on a terminal, lines for
 * a person (pino-pretty). Every line of the process goes through one of these, the start-up line
 * included, so that they share fields, level names and format. `withoutCredentialFields` guards against a
 * credential ever being added to a line by mistake; it copies nothing unless it removes a field (pino's `redact`
 * copied every line).
 */
export function nodeLogger(settings: LogSettings, destination?: DestinationStream): Logger {
  const options = {
    level: settings.logLevel,
    base: { service: "promptgate" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }), log: withoutCredentialFields },
  };
  // stdout is written synchronously, from the event loop's own thread: a line logged just before the process exits is
  // never lost in a buffer, the loggers of one process cannot reorder each other's lines, and a line costs one write
  // instead of a hand-off to libuv's thread pool and back (pino's default), which cost more CPU than the write itself.
  const target = destination ?? pino.destination({ fd: 1, sync: true });
  if (!pretty(settings, destination)) return pino(options, target);
  const terminal = destination === undefined ? process.stdout.isTTY === true : isTerminal(destination);
  // Formatted in the same turn as the line is logged, and written as above.
  const prettify = prettyFactory({
    colorize: terminal,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "service",
    // A call line's `error` is its error code, not an Error to print on lines of its own.
    errorLikeObjectKeys: ["err"],
  });
  return pino(options, { write: (line: string) => target.write(prettify(line)) });
}

/** Pretty when asked to, or when not told and the lines go to a terminal. */
function pretty(settings: LogSettings, destination: DestinationStream | undefined): boolean {
  if (settings.logFormat !== undefined) return settings.logFormat === "pretty";
  return destination === undefined ? process.stdout.isTTY === true : isTerminal(destination);
}

function isTerminal(destination: DestinationStream): boolean {
  return (destination as { isTTY?: unknown }).isTTY === true;
}

/**
 * The gateway's log (`Deps["log"]`) on a Node logger: one line per call, one per internal error (at
 * `error`, with its redacted stack), a count of requests refused before authentication at most once a
 * minute, and at `debug` the steps of each call. A line holds only what its type holds.
 */
export function callLogger(logger: Logger): (entry: LogEntry) => void {
  const linesOf = logLines();
  return (entry) => {
    const written = linesOf(entry, Date.now());
    if (written !== undefined) logger[written.level](written.line, written.message);
  };
}
