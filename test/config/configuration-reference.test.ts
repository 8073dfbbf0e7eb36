import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configurationReference, configurationReferencePath } from "../../scripts/configuration-reference.js";
import { configVariables } from "../../src/config-variables.js";
import { mainHelp } from "../../src/runtime/node/cli/main-help.js";

// The configuration reference, `promptgate --help` and the table the configuration reads (src/config-variables.ts)
// say the same: the page is the table's rendering as committed, and the help lists every variable with its text.

const root = join(import.meta.dirname, "..", "..");

/** Text with its runs of spaces and line breaks as single spaces, as the help wraps it. */
function flowing(text: string): string {
  return text.replaceAll(/\s+/g, " ");
}

describe("the configuration reference", () => {
  it("is the table as rendered now (run npm run docs:config after changing the table)", () => {
    expect(readFileSync(join(root, configurationReferencePath), "utf8")).toBe(configurationReference());
  });

  it("lists every variable once, as --help does, with the same text", () => {
    const page = readFileSync(join(root, configurationReferencePath), "utf8");
    const help = flowing(mainHelp);
    const names = configVariables.map(({ name }) => name);
    expect(new Set(names).size).toBe(names.length);
    for (const { name, describe } of configVariables) {
      expect(page.split(`| \`${name}\` |`)).toHaveLength(2);
      expect(help).toContain(`${name} ${flowing(describe)}`);
    }
  });

  it("lists in --help no variable outside the table", () => {
    const named = new Set(mainHelp.match(/^ {2}[A-Z][A-Z0-9_]+(?= |$)/gm)?.map((line) => line.trim()));
    expect([...named].sort()).toEqual(configVariables.map(({ name }) => name).sort());
  });
});
