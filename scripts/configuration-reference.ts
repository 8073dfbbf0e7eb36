// docs/operate/configuration.md, written from the gateway's table of variables (src/config-variables.ts), the one
// `--help` and the configuration read too. `npm run docs:config` rewrites the page; a test fails while it is stale.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type ConfigVariable, configVariables } from "../src/config-variables.js";

/** Where the page lives, from the repository's root. */
export const configurationReferencePath = "docs/operate/configuration.md";

/** The page: every variable of the table under its section, in the table's order. */
export function configurationReference(): string {
  const sections = new Map<string, ConfigVariable[]>();
  for (const variable of configVariables) {
    sections.set(variable.section, [...(sections.get(variable.section) ?? []), variable]);
  }
  const parts = [...sections].map(([section, variables]) =>
    [
      `## ${section}`,
      "",
      "| variable | what it sets |",
      "|---|---|",
      ...variables.map(({ name, describe }) => `| \`${name}\` | ${describe.replaceAll("|", "\\|")} |`),
    ].join("\n"),
  );
  return [
    "# Configuration reference",
    "",
    "<!-- Written by `npm run docs:config` from src/config-variables.ts; edit the table there, not this page. -->",
    "",
    "promptgate reads its configuration from the environment (on Node also from a `.env` file in the working",
    "directory; on Workers from the Worker's variables and secrets). `promptgate --help` lists the same variables.",
    "A `PROMPTGATE_*` variable that is not listed here is warned of at start-up, with the closest known name.",
    "",
    parts.join("\n\n"),
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL(`../${configurationReferencePath}`, import.meta.url), configurationReference());
  console.log(`Wrote ${configurationReferencePath}.`);
}
