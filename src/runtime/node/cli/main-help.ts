import { configVariables } from "../../../config-variables.js";

/** The width of the help's first column, and of its lines. */
const nameWidth = 31;
const lineWidth = 110;

/** Every variable of the table, its name in the first column and its text wrapped in the second. */
function variableLines(): string {
  const indent = " ".repeat(nameWidth + 2);
  return configVariables
    .map(({ name, describe }) => {
      const lines = wrapped(describe, lineWidth - indent.length);
      const first = name.length < nameWidth ? `  ${name.padEnd(nameWidth)}${lines.shift()}` : `  ${name}`;
      return [first, ...lines.map((line) => `${indent}${line}`)].join("\n");
    })
    .join("\n");
}

/** Words into lines of at most `width` characters (a longer word keeps a line of its own). */
function wrapped(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

/** The `--help` text of `promptgate`: every command, and the environment the gateway reads. */
export const mainHelp = `promptgate: an HTTP gateway that keeps every LLM call inside a central prompt-size policy.

Usage:
  promptgate [serve]                     start the gateway (the default command)
  promptgate replay --policy NAME FILE…  replay stored request bodies through the gateway's checks,
                                         offline, and print one JSON report (promptgate replay --help)
  promptgate init [DIR] [--force]        copy the shipped policies/ and schemas/ into DIR (default .)
                                         for editing (promptgate init --help)
  promptgate selftest [--timeout S] [--simulated]
                                         the release check: one synthetic answer job per provider,
                                         end to end, with a validated structured answer; prints a
                                         JSON report; a simulated provider fails it unless
                                         --simulated (promptgate selftest --help)
  promptgate signature SCHEMA.json       a schema's compact signature and form example, with their
                                         sizes (promptgate signature --help)
  promptgate keys create|list|get|revoke|rotate|hash
                                         manage the named keys of the store PROMPTGATE_DB names;
                                         prints JSON (promptgate keys --help)
  promptgate --version                   print the version
  promptgate --help                      show this text

From the repository, npm start runs promptgate serve.

Configuration comes from the environment (and a .env file in the working directory):
${variableLines()}
While no provider is configured (no upstream URL and no key), the built-in simulated provider answers
every call; once one is, an unconfigured provider uses its public upstream, and a call that needs its
key gets 403 naming the variable (PROMPTGATE_SIMULATED=on simulates the unconfigured ones instead).
A PROMPTGATE_* variable not listed here is warned of at start-up, with the closest name.
Once listening, the gateway writes one JSON line to stdout (event "listening": its address,
data file, folders, policy versions, auth mode and upstreams); it logs in JSON lines there.
`;
