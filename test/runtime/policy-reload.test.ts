import { EventEmitter } from "node:events";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stopOnSignals } from "../../src/runtime/node/stop-on-signals.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

const adminKey = "admin-key-for-reload-tests";
let harness: GatewayUnderTest;
let folder: string;

type Json = Record<string, unknown>;
type Version = { ref: string; name: string; current: boolean };

beforeEach(async () => {
  folder = copyPolicies();
  harness = await startGatewayUnderTest({
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_POLICIES: folder,
    PROMPTGATE_DB: tempDatabase(),
  });
});
afterEach(async () => {
  await harness.close();
  rmSync(folder, { recursive: true, force: true });
});

function reload(key = adminKey, query = ""): Promise<Response> {
  return fetch(`${harness.gateway.url}/promptgate/admin/policies/reload${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
  });
}

async function versions(): Promise<Version[]> {
  const response = await fetch(`${harness.gateway.url}/promptgate/policies`);
  return ((await response.json()) as { policies: Version[] }).policies;
}

async function currentRef(name: string): Promise<string | undefined> {
  return (await versions()).find((version) => version.name === name && version.current)?.ref;
}

/** The policy version a bounded call ran under, as its prompt-size header says. */
async function boundedCall(headers: Record<string, string> = {}, policy = "investigation.bounded"): Promise<Response> {
  return fetch(`${harness.gateway.url}/policies/${policy}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }] }),
  });
}

function policyOf(response: Response): string {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}").policy;
}

/** The reload lines the gateway logged, parsed. */
function reloadLines(): Json[] {
  return harness.logs
    .map((line) => JSON.parse(line) as Json)
    .filter((line) => String(line.event).startsWith("policies_"));
}

describe("POST /promptgate/admin/policies/reload", () => {
  it("switches to a changed folder and answers with the versions and what changed", async () => {
    const before = await currentRef("investigation.bounded");
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    const response = await reload();
    expect(response.status).toBe(200);
    const after = await currentRef("investigation.bounded");
    expect(after).not.toBe(before);
    const body = (await response.json()) as { policies: string[]; changes: Json[] };
    expect(body.changes).toEqual([{ name: "investigation.bounded", from: before, to: after }]);
    expect(body.policies).toContain(after);
    expect(body.policies).toHaveLength(4);
    const call = await boundedCall();
    expect(policyOf(call)).toBe(after);
    expect(JSON.parse(call.headers.get("x-promptgate-prompt-size") ?? "{}")).toMatchObject({ limit_chars: 30_000 });
  });

  it("answers an unchanged folder with no changes", async () => {
    const response = await reload();
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ changes: [] });
  });

  it("keeps the earlier version for pins and for the cases frozen on it", async () => {
    const before = (await currentRef("investigation.bounded")) ?? "";
    await boundedCall({ "x-promptgate-case": "frozen-before-reload" });
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    expect((await reload()).status).toBe(200);
    expect(policyOf(await boundedCall({ "x-promptgate-case": "frozen-before-reload" }))).toBe(before);
    expect(policyOf(await boundedCall({}, before))).toBe(before);
    expect(policyOf(await boundedCall({ "x-promptgate-case": "new-after-reload" }))).not.toBe(before);
    const listed = await versions();
    expect(listed.find((version) => version.ref === before)).toMatchObject({ current: false });
  });

  it("adds a new policy file and forgets a removed one's name, keeping its versions pinnable", async () => {
    const removed = (await currentRef("case.interpretation")) ?? "";
    rmSync(join(folder, "case.interpretation.toml"));
    writeFileSync(
      join(folder, "extra.toml"),
      'name = "extra"\n[window]\nenforce = true\ntarget_chars = 100\nlimit_chars = 1000\nreserve_chars = 10\n',
    );
    const response = await reload();
    expect(response.status).toBe(200);
    const { changes } = (await response.json()) as { changes: Json[] };
    expect(changes).toEqual([
      { name: "case.interpretation", from: removed, to: null },
      { name: "extra", from: null, to: expect.stringMatching(/^extra@[0-9a-f]{12}$/) },
    ]);
    expect((await boundedCall({}, "case.interpretation")).status).toBe(404);
    expect((await boundedCall({}, removed)).status).toBe(200);
    expect((await boundedCall({}, "extra")).status).toBe(200);
  });

  it("refuses a folder with invalid files with 422, every problem by file, field and reason, and keeps the running set", async () => {
    const before = await versions();
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    writeFileSync(join(folder, "broken.toml"), "name = \n");
    writeFileSync(join(folder, "misspelt.toml"), 'name = "misspelt"\n[window]\nlimit_char = 5\n');
    const response = await reload();
    expect(response.status).toBe(422);
    const { error } = (await response.json()) as { error: Json & { problems: Json[]; policies: string[] } };
    expect(error).toMatchObject({ code: "POLICY_RELOAD_REFUSED", promptgate: { retryable: false } });
    expect(error.message).toContain("the running policies are kept");
    expect(error.problems).toHaveLength(2);
    expect(error.problems[0]).toMatchObject({ file: join(folder, "broken.toml"), field: "(root)" });
    expect(error.problems[1]).toMatchObject({ file: join(folder, "misspelt.toml") });
    expect(error.policies).toEqual(before.filter((version) => version.current).map((version) => version.ref));
    expect(await versions()).toEqual(before);
  });

  it("refuses a folder that repeats a policy name", async () => {
    writeFileSync(
      join(folder, "again.toml"),
      'name = "default"\n[window]\nenforce = true\ntarget_chars = 100\nlimit_chars = 1000\nreserve_chars = 10\n',
    );
    const response = await reload();
    expect(response.status).toBe(422);
    const { error } = (await response.json()) as { error: { problems: Json[] } };
    expect(error.problems).toEqual([
      {
        file: join(folder, "default.toml"),
        field: "name",
        reason: `repeats the name of ${join(folder, "again.toml")}`,
      },
    ]);
  });

  it("takes a policy that lists a named schema the gateway does not have, and logs a warning naming it", async () => {
    editPolicy(folder, "investigation.bounded.toml", (text) =>
      text.replace('on_invalid = "error"', 'on_invalid = "error"\nschemas = ["investigation_bootstrap_v22", "nope"]'),
    );
    const response = await reload();
    expect(response.status).toBe(200);
    const after = await currentRef("investigation.bounded");
    const warnings = harness.logs
      .map((line) => JSON.parse(line) as Json)
      .filter((line) => line.event === "policy_schema_missing");
    expect(warnings).toEqual([
      expect.objectContaining({
        level: "warn",
        policy: after,
        file: join(folder, "investigation.bounded.toml"),
        field: "validation.schemas[1]",
        schema: "nope",
        msg:
          `policy ${after} (${join(folder, "investigation.bounded.toml")}) accepts the named schema nope, which the ` +
          "gateway does not have: its calls with a response schema are refused until nope.json is in the schema " +
          "folder (PROMPTGATE_SCHEMAS) or the name is removed from validation.schemas",
      }),
    ]);
  });

  it("refuses a folder without the default policy, and one that cannot be read", async () => {
    rmSync(join(folder, "default.toml"));
    const withoutDefault = (await (await reload()).json()) as { error: { problems: Json[] } };
    expect(withoutDefault.error.problems).toEqual([
      { file: folder, field: "name", reason: "no file holds the default policy (PROMPTGATE_DEFAULT_POLICY)" },
    ]);
    renameSync(folder, `${folder}-moved`);
    try {
      const response = await reload();
      expect(response.status).toBe(422);
      const unreadable = (await response.json()) as { error: { problems: Json[] } };
      expect(unreadable.error.problems).toEqual([
        { file: folder, field: "(folder)", reason: "cannot be read (ENOENT)" },
      ]);
    } finally {
      renameSync(`${folder}-moved`, folder);
    }
    expect(await currentRef("default")).toMatch(/^default@/);
  });

  it("logs each reload as one line: what changed, or why the running set stays", async () => {
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    await reload();
    writeFileSync(join(folder, "broken.toml"), "name = \n");
    await reload();
    const [reloaded, kept] = reloadLines();
    expect(reloaded).toMatchObject({
      level: "info",
      event: "policies_reloaded",
      trigger: "POST /promptgate/admin/policies/reload",
      changes: [{ name: "investigation.bounded" }],
    });
    expect(kept).toMatchObject({
      level: "warn",
      event: "policies_kept",
      problems: [{ file: join(folder, "broken.toml"), field: "(root)" }],
    });
    expect(String(kept?.msg)).toContain("the policy folder is not valid");
  });

  it("needs the admin key and takes no query parameters", async () => {
    expect((await reload("wrong-admin-key")).status).toBe(401);
    const response = await reload(adminKey, "?force=1");
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain("force");
  });
});

describe("SIGHUP", () => {
  it("reloads the policy folder, and the log line names the signal", async () => {
    const signals = new EventEmitter();
    const exit = { write: () => {}, exit: () => {} };
    stopOnSignals(harness.gateway, exit, signals, signals);
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    const before = await currentRef("investigation.bounded");
    signals.emit("SIGHUP", "SIGHUP");
    for (let attempt = 0; attempt < 100 && reloadLines().length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(reloadLines()).toMatchObject([{ event: "policies_reloaded", trigger: "SIGHUP" }]);
    expect(await currentRef("investigation.bounded")).not.toBe(before);
  });

  it("keeps the running set on SIGHUP when the folder is invalid", async () => {
    const signals = new EventEmitter();
    stopOnSignals(harness.gateway, { write: () => {}, exit: () => {} }, signals, signals);
    const before = await versions();
    writeFileSync(join(folder, "broken.toml"), "name = \n");
    signals.emit("SIGHUP", "SIGHUP");
    for (let attempt = 0; attempt < 100 && reloadLines().length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(reloadLines()).toMatchObject([{ event: "policies_kept", trigger: "SIGHUP" }]);
    expect(await versions()).toEqual(before);
  });
});
