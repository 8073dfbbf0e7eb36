import { type DestinationStream, type Logger, pino } from "pino";
import { prettyFactory } from "pino-pretty";
import type { Config } from "../../config.js";
import { withoutCredentialFields } from "../../record/credential-fields.js";
import { type LogEntry, logLines } from "../../record/log-entry.js";
import { atTurnEnd } from "./turn-end.js";

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
    timestamp: isoTime,
    formatters: { level: (label: string) => ({ level: label }), log: withoutCredentialFields },
  };
  const target = destination ?? stdoutLines();
  if (!pretty(settings, destination)) return pino(options, target);
  const terminal = destination === undefined ? process.stdout.isTTY === true : isTerminal(destination);
  // Formatted in the same turn as the line is logged, and written as `stdoutLines` writes.
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

/**
 * The most bytes one write of several lines holds: POSIX's PIPE_BUF on Linux, the most that a write to a pipe puts in
 * at once. Processes that share a stdout pipe (the workers of `PROMPTGATE_WORKERS`, a supervisor's) then never split
 * each other's lines, as when each line was a write of its own. A longer line is still written alone.
 */
const atomicWriteBytes = 4096;
let processStdout: DestinationStream | undefined;

/**
 * The process's stdout, shared by all its loggers so that their lines stay in the order logged. The lines of one turn
 * of the event loop are written together at its end, in writes of whole lines up to 4 KiB, synchronously from the
 * event loop's own thread: under load, several calls end in one turn, and a write to a pipe costs far more than the
 * line. The turn's end is `atTurnEnd`'s, so that the lines of the work handed to it (a call's line) are written in the
 * same pass. What waits is written when the process exits, through an uncaught exception too; only a process killed
 * outright (SIGKILL, an abort) loses the lines of the turn it was in, at most 4 KiB. Not libuv's thread pool (pino's
 * default): its hand-off and wake-up cost more CPU than the write.
 */
function stdoutLines(): DestinationStream {
  if (processStdout !== undefined) return processStdout;
  const stdout = pino.destination({ fd: 1, sync: true });
  let waiting = "";
  let waitingBytes = 0;
  let scheduled = false;
  const flush = () => {
    if (waiting === "") return;
    const text = waiting;
    waiting = "";
    waitingBytes = 0;
    stdout.write(text);
  };
  // One pending turn's end at a time: a flush of a full write before it leaves it in place.
  const endOfTurn = () => {
    scheduled = false;
    flush();
  };
  process.on("exit", flush);
  processStdout = {
    write(line: string) {
      const bytes = Buffer.byteLength(line);
      if (waitingBytes + bytes > atomicWriteBytes) flush();
      waiting += line;
      waitingBytes += bytes;
      if (waitingBytes >= atomicWriteBytes) flush();
      else if (!scheduled) {
        scheduled = true;
        atTurnEnd(endOfTurn);
      }
    },
  };
  return processStdout;
}

let timeMs = Number.NaN;
let timeText = "";

/**
 * pino's `time` member in ISO 8601, as `pino.stdTimeFunctions.isoTime` writes it, built once per millisecond: under
 * load several lines share one. The date's text was an eighth of the CPU of a call's log line (0.48 of 3.9 % of a
 * loaded profile).
 */
function isoTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeText = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeText;
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
