import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import { chooseConfigFolders } from "../../src/runtime/node/config-folders.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";
import { packageFolders } from "../../src/runtime/node/package-paths.js";

const emptyFolder = () => mkdtempSync(join(tmpdir(), "promptgate-folders-"));

describe("the policies and schemas folders", () => {
  it("are the package's own when the working directory has none and no variable is set", () => {
    const folders = chooseConfigFolders({}, emptyFolder());
    expect(folders.policies).toEqual({ path: packageFolders.policies, source: "package" });
    expect(folders.schemas).toEqual({ path: packageFolders.schemas, source: "package" });
    const config = readConfig(folders.environment);
    expect([config.policiesDir, config.schemasDir]).toEqual([packageFolders.policies, packageFolders.schemas]);
  });

  it("are the working directory's ./policies and ./schemas when it has them", () => {
    const directory = emptyFolder();
    mkdirSync(join(directory, "policies"));
    const folders = chooseConfigFolders({}, directory);
    expect(folders.policies).toEqual({ path: join(directory, "policies"), source: "working directory" });
    expect(folders.schemas.source).toBe("package");
    expect(folders.environment.PROMPTGATE_POLICIES).toBeUndefined();
  });

  it("are the variables' folders when set, even where the working directory has its own", () => {
    const directory = emptyFolder();
    mkdirSync(join(directory, "policies"));
    const folders = chooseConfigFolders({ PROMPTGATE_POLICIES: "mine", PROMPTGATE_SCHEMAS: "/srv/schemas" }, directory);
    expect(folders.policies).toEqual({ path: join(directory, "mine"), source: "PROMPTGATE_POLICIES" });
    expect(folders.schemas).toEqual({ path: "/srv/schemas", source: "PROMPTGATE_SCHEMAS" });
    expect(folders.environment.PROMPTGATE_POLICIES).toBe("mine");
  });
});

describe("PROMPTGATE_SCHEMAS naming a folder of the user's own schemas", () => {
  it("serves them without the policy meta-schema in it, and only them as named schemas", async () => {
    const directory = emptyFolder();
    writeFileSync(
      join(directory, "ticket.json"),
      JSON.stringify({ type: "object", properties: { id: { type: "string" } } }),
    );
    const lines: string[] = [];
    const deps = await createNodeDeps(
      { PROMPTGATE_SCHEMAS: directory, PROMPTGATE_DB: "memory", PROMPTGATE_LOG_FORMAT: "json" },
      { logDestination: { write: (line: string) => lines.push(line) } },
    );
    try {
      expect([...deps.schemas.keys()]).toEqual(["ticket"]);
      expect(deps.policies.resolve("investigation.bounded").policy.name).toBe("investigation.bounded");
      // The shipped v1 policy accepts only a shipped schema, which this folder lacks: said at start-up, once.
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.event === "policy_schema_missing");
      expect(warnings).toEqual([
        expect.objectContaining({
          level: "warn",
          policy: deps.policies.resolve("investigation.bounded.v1").ref,
          field: "validation.schemas[0]",
          schema: "investigation_bootstrap_v21",
        }),
      ]);
    } finally {
      await deps.store.close();
    }
  });
});
