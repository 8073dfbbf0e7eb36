import type { LogLevel } from "../../config.js";
import { type CallLogLine, logLevelOf } from "../../record/call-log-line.js";

const ranks: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 };

/**
 * The Workers runtime's call log: the same one JSON line per call as on Node, written with
 * `console.log`, which Workers Logs and `wrangler tail` collect. Lines below `level` are dropped.
 */
export function consoleCallLog(level: LogLevel): ((line: CallLogLine) => void) | undefined {
  if (level === "silent") return undefined;
  return (line) => {
    const lineLevel = logLevelOf(line);
    if (ranks[lineLevel] < ranks[level]) return;
    console.log(JSON.stringify({ level: lineLevel, time: new Date().toISOString(), service: "promptgate", ...line }));
  };
}
