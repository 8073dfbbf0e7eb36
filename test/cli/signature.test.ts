import { describe, expect, it } from "vitest";
import { main } from "../../src/runtime/node/cli/main.js";
import { signature } from "../../src/window/signature.js";
import { capture } from "../support/captured-io.js";

describe("promptgate signature", () => {
  const file = "schemas/investigation_bootstrap_v22.json";

  it("prints the schema's signature, its form example and the sizes", async () => {
    const output = capture();
    expect(await main(["signature", file], output.io)).toBe(0);
    expect(output.stdout()).toContain('next: {action: "tool/project.query"');
    expect(output.stdout()).toContain("Form example (placeholder values, not a research instruction):");
    expect(output.stdout()).toContain("signature 912 characters (21 % of the schema's 4309)");
  });

  it("prints one JSON object with --json", async () => {
    const output = capture();
    expect(await main(["signature", "--json", file], output.io)).toBe(0);
    const described = JSON.parse(output.stdout()) as { signature: string; schema_chars: number };
    expect(described.schema_chars).toBe(4309);
    expect(described.signature).toBe(
      signature(JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(file, "utf8")))),
    );
  });

  it.each([
    ["no file", []],
    ["a file that is not there", ["no-such-schema.json"]],
    ["a file that is not JSON", ["README.md"]],
  ])("refuses %s with a usage error", async (_name, args) => {
    const output = capture();
    expect(await main(["signature", ...args], output.io)).toBe(2);
    expect(output.stderr()).toContain("promptgate signature");
  });
});
