import type { LogLevel } from "../../config.js";
import { withoutCredentialFields } from "../../record/credential-fields.js";
import { type LogEntry, logLines, type WrittenLine } from "../../record/log-entry.js";

const ranks: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 };

/** The console method of each level, from which Workers Logs takes a line's level. */
const write: Record<WrittenLine["level"], (text: string) => void> = {
  debug: (text) => console.debug(text),
  info: (text) => console.log(text),
  warn: (text) => console.warn(text),
  error: (text) => console.error(text),
};

/**
 * The Workers runtime's log: the same JSON lines as on Node (a call's, an internal error's, a count
 * of refusals once a minute), written with the console method of their level, which Workers Logs
 * and `wrangler tail` collect. Lines below `level` are dropped. Made once per isolate.
 */
export function consoleCallLog(level: LogLevel): ((entry: LogEntry) => void) | undefined {
  if (level === "silent") return undefined;
  const linesOf = logLines();
  return (entry) => {
    const written = linesOf(entry, Date.now());
    if (written === undefined || ranks[written.level] < ranks[level]) return;
    const time = new Date().toISOString();
    write[written.level](
      JSON.stringify({
        level: written.level,
        time,
        service: "promptgate",
        ...withoutCredentialFields(written.line),
        msg: written.message,
      }),
    );
  };
}
