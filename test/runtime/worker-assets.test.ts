import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { staleWorkerAssets, workerAssetFiles } from "../../scripts/build-worker-assets.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";
import { readNamedSchemas, readPolicyFiles } from "../../src/runtime/node/node-gateway.js";
import { bundledNamedSchemas } from "../../src/runtime/workers/bundled-schemas.js";
import { policies } from "../../src/runtime/workers/generated/assets.js";

const root = join(import.meta.dirname, "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "promptgate-assets-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the assets bundled into the worker", () => {
  it("are what policies/, schemas/ and migrations/ give now (else: npm run build:worker-assets)", async () => {
    expect(staleWorkerAssets(await workerAssetFiles())).toEqual([]);
  });

  it("identify every policy version as the Node loader does from the files", async () => {
    const policySchema = JSON.parse(await readFile(join(root, "schemas", "policy.schema.json"), "utf8"));
    const onNode = await loadPolicies(await readPolicyFiles("policies"), policySchema);
    const bundled = await identifyPolicies(structuredClone(policies));
    expect(bundled.list()).toEqual(onNode.list());
  });

  it("hold the named schemas the Node runtime reads", async () => {
    expect(bundledNamedSchemas()).toEqual(await readNamedSchemas(join(root, "schemas")));
  });

  it("cannot be built from an invalid policy file, which names the file and field", async () => {
    for (const folder of ["policies", "schemas", "migrations"])
      cpSync(join(root, folder), join(scratch, folder), { recursive: true });
    writeFileSync(join(scratch, "policies", "broken.toml"), 'name = "broken"\n[window]\nenforce = "yes"\n');
    const failure = await workerAssetFiles(scratch).catch((error: unknown) => error);
    expect(PolicyFileError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ file: "policies/broken.toml" });
  });
});
