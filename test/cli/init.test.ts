import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/runtime/node/cli/main.js";
import { chooseConfigFolders } from "../../src/runtime/node/config-folders.js";
import { packageFolders } from "../../src/runtime/node/package-paths.js";
import { capture } from "../support/captured-io.js";

const emptyFolder = () => mkdtempSync(join(tmpdir(), "promptgate-init-"));
const shipped = (folder: "policies" | "schemas") =>
  readdirSync(packageFolders[folder]).filter((name) => name !== "policy.schema.json");

describe("promptgate init", () => {
  it("copies the shipped policies and named schemas into DIR and says what it wrote", async () => {
    const directory = join(emptyFolder(), "config");
    const output = capture();
    expect(await main(["init", directory], output.io)).toBe(0);
    expect(readdirSync(join(directory, "policies"))).toEqual(shipped("policies"));
    expect(readdirSync(join(directory, "schemas"))).toEqual(shipped("schemas"));
    const policy = "default.toml";
    expect(readFileSync(join(directory, "policies", policy), "utf8")).toBe(
      readFileSync(join(packageFolders.policies, policy), "utf8"),
    );
    expect(output.stdout()).toContain(
      `wrote ${shipped("policies").length + shipped("schemas").length} files to ${directory}`,
    );
    expect(output.stdout()).toContain(join("policies", policy));
  });

  it("leaves the policy meta-schema in the package, where the gateway always reads it", async () => {
    const directory = emptyFolder();
    expect(await main(["init", directory], capture().io)).toBe(0);
    expect(existsSync(join(directory, "schemas", "policy.schema.json"))).toBe(false);
  });

  it("makes the folders the gateway serves when started in DIR", async () => {
    const directory = emptyFolder();
    await main(["init", directory], capture().io);
    const folders = chooseConfigFolders({}, directory);
    expect([folders.policies.source, folders.schemas.source]).toEqual(["working directory", "working directory"]);
  });

  it("writes nothing when a file it would write exists, naming it, and exits 1", async () => {
    const directory = emptyFolder();
    mkdirSync(join(directory, "policies"));
    writeFileSync(join(directory, "policies", "default.toml"), "# mine\n");
    const output = capture();
    expect(await main(["init", directory], output.io)).toBe(1);
    expect(output.stderr()).toContain(join("policies", "default.toml"));
    expect(output.stderr()).toContain("--force");
    expect(readFileSync(join(directory, "policies", "default.toml"), "utf8")).toBe("# mine\n");
    expect(readdirSync(join(directory, "policies"))).toEqual(["default.toml"]);
    expect(existsSync(join(directory, "schemas"))).toBe(false);
  });

  it("overwrites existing files with --force, and says so", async () => {
    const directory = emptyFolder();
    mkdirSync(join(directory, "policies"));
    writeFileSync(join(directory, "policies", "default.toml"), "# mine\n");
    const output = capture();
    expect(await main(["init", "--force", directory], output.io)).toBe(0);
    expect(readFileSync(join(directory, "policies", "default.toml"), "utf8")).not.toBe("# mine\n");
    expect(output.stdout()).toContain(`${join("policies", "default.toml")} (overwritten)`);
  });

  it("exits 2 for an unknown option or a second DIR", async () => {
    for (const args of [
      ["init", "--yes"],
      ["init", "one", "two"],
    ]) {
      const output = capture();
      expect(await main(args, output.io)).toBe(2);
      expect(output.stderr()).toContain("Usage: promptgate init [DIR] [--force]");
    }
  });
});
