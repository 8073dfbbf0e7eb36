import { EventEmitter } from "node:events";
import { rmSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { Deps } from "../../src/deps.js";
import { createPolicyRegistry } from "../../src/policy/policy-registry.js";
import { reloadablePolicies } from "../../src/policy/reloadable-policies.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";
import { stopOnSignals } from "../../src/runtime/node/stop-on-signals.js";
import { policyVersion, sha } from "../store/store-contract.js";
import { copyPolicies, editPolicy, withLimit } from "../support/temp-state.js";

const adminKey = "admin-key-for-switch-tests";
let folder: string;
let deps: Deps;
let lines: string[];

beforeEach(async () => {
  folder = copyPolicies();
  lines = [];
  deps = await createNodeDeps(
    { PROMPTGATE_POLICIES: folder, PROMPTGATE_DB: "memory", PROMPTGATE_ADMIN_KEY: adminKey },
    { logDestination: { write: (line) => void lines.push(line) } },
  );
});
afterEach(async () => {
  await deps.store.close();
  rmSync(folder, { recursive: true, force: true });
});

function reloadPolicies(trigger: string) {
  if (deps.reloadPolicies === undefined) throw new Error("The Node deps reload their policies.");
  return deps.reloadPolicies(trigger);
}

describe("switching the policy registry", () => {
  it("keeps the version a call resolved before the switch, and resolves the new one after it", async () => {
    const resolvedBefore = deps.policies.resolve("investigation.bounded");
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    await reloadPolicies("test");
    expect(resolvedBefore.policy.window.limit_chars).toBe(20_000);
    expect(deps.policies.resolve("investigation.bounded").policy.window.limit_chars).toBe(30_000);
    expect(deps.policies.resolve(resolvedBefore.ref)).toEqual(resolvedBefore);
  });

  it("switches nothing when the store cannot keep the new versions, and logs the failure", async () => {
    const before = deps.policies.resolve("investigation.bounded");
    deps.store.savePolicyVersion = () => Promise.reject(new Error("disk full"));
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    await expect(reloadPolicies("test")).rejects.toThrow("disk full");
    expect(deps.policies.resolve("investigation.bounded")).toBe(before);
    const line = JSON.parse(lines.at(-1) ?? "{}");
    expect(line).toMatchObject({ level: "error", event: "policies_kept", failure: "Error: disk full" });
    expect(line.policies).toContain(before.ref);
  });

  it("answers the admin route with 500 POLICY_RELOAD_FAILED when the reload fails", async () => {
    deps.store.savePolicyVersion = () => Promise.reject(new Error("disk full"));
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    const response = await createApp(deps).request("/promptgate/admin/policies/reload", {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("POLICY_RELOAD_FAILED");
    expect(body.error.message).not.toContain("disk full");
  });

  it("runs reloads one at a time, each seeing the folder as it is when its turn comes", async () => {
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    const outcomes = await Promise.all([reloadPolicies("first"), reloadPolicies("second")]);
    expect(outcomes[0]).toMatchObject({ reloaded: true, changes: [{ name: "investigation.bounded" }] });
    expect(outcomes[1]).toMatchObject({ reloaded: true, changes: [] });
  });

  it("lists versions in the order they became known, across switches", () => {
    const first = policyVersion("one", sha("a"));
    const second = policyVersion("two", sha("b"));
    const third = policyVersion("one", sha("c"));
    const policies = reloadablePolicies(createPolicyRegistry([first, second]));
    policies.replace(createPolicyRegistry([third, second], [first]), [third, second]);
    expect(policies.list().map((version) => version.sha256)).toEqual([sha("a"), sha("b"), sha("c")]);
    expect(policies.current()).toEqual([third, second]);
    expect(policies.resolve("one")).toBe(third);
  });

  it("ignores SIGHUP once a stop has begun", () => {
    const reloads: string[] = [];
    const gateway = {
      config: deps.config,
      shutdown: () => new Promise<never>(() => {}),
      reloadPolicies: async (trigger: string) => {
        reloads.push(trigger);
        return { reloaded: true as const, policies: [], changes: [] };
      },
    };
    const signals = new EventEmitter();
    stopOnSignals(gateway, { write: () => {}, exit: () => {} }, signals, signals);
    signals.emit("SIGHUP", "SIGHUP");
    signals.emit("SIGTERM", "SIGTERM");
    signals.emit("SIGHUP", "SIGHUP");
    expect(reloads).toEqual(["SIGHUP"]);
  });
});
