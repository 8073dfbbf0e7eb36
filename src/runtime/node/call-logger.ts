import { type DestinationStream, pino } from "pino";
import type { LogLevel } from "../../config.js";
import { type CallLogLine, logLevelOf } from "../../record/call-log-line.js";

/**
 * The Node runtime's call log: one JSON line per call through pino, to stdout unless a
 * destination is given (tests capture the lines). The line holds only what `CallLogLine` holds;
 * the redaction paths guard against a credential ever being added to it by mistake.
 */
export function callLogger(level: LogLevel, destination?: DestinationStream): (line: CallLogLine) => void {
  const options = {
    level,
    base: { service: "promptgate" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: ["authorization", "key", "api_key", "headers", "*.authorization", "*.key"], remove: true },
  };
  const logger = destination === undefined ? pino(options) : pino(options, destination);
  return (line) => logger[logLevelOf(line)](line, "call");
}
