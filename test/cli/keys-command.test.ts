import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fileKeyId } from "../../src/keys/key-file.js";
import { keysCommand } from "../../src/runtime/node/cli/keys-command.js";
import { main } from "../../src/runtime/node/cli/main.js";
import { sqliteStore } from "../../src/runtime/node/sqlite-store.js";
import { capture } from "../support/captured-io.js";
import { copyPolicies, tempDatabase } from "../support/temp-state.js";

const fileSecretSha256 = "d".repeat(64);
const keyFile = `[[key]]\nname = "from-file"\nteam = "ops"\nsecret_sha256 = "${fileSecretSha256}"\n`;

/** A temporary SQLite store and a copy of the shipped policies with a keys.toml, as the environment names them. */
function environment(): Record<string, string> {
  return { PROMPTGATE_DB: tempDatabase(), PROMPTGATE_POLICIES: copyPolicies({ "keys.toml": keyFile }) };
}

/** Runs `promptgate keys ...` through the CLI's entry; answers the exit code, stdout as JSON when it is, and stderr. */
async function keys(env: Record<string, string>, ...args: string[]) {
  const output = capture(env);
  const code = await main(["keys", ...args], output.io);
  const stdout = output.stdout();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr: output.stderr(), json };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

describe("promptgate keys (in process, on a SQLite file)", () => {
  it("creates a key and prints the admin API's 201 answer, the secret in it", async () => {
    const env = environment();
    const created = await keys(
      env,
      "create",
      "--name",
      "team-a-ci",
      "--team",
      "team-a",
      "--policy",
      "investigation.bounded",
      "--policy",
      "default",
      "--model",
      "gpt-4.1*",
      "--model",
      "claude-*",
      "--expires",
      "2099-01-01T00:00:00Z",
    );
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(Object.keys(created.json ?? {})).toEqual([
      "id",
      "key",
      "name",
      "team",
      "policies",
      "models",
      "credentials",
      "limits",
      "created_at",
      "expires_at",
      "revoked_at",
      "last_used_at",
      "source",
    ]);
    expect(created.json).toMatchObject({
      name: "team-a-ci",
      team: "team-a",
      policies: ["investigation.bounded", "default"],
      models: ["gpt-4.1*", "claude-*"],
      credentials: {},
      limits: null,
      expires_at: "2099-01-01T00:00:00.000Z",
      revoked_at: null,
      source: "api",
    });
    expect(created.json?.id).toMatch(/^key_[0-9a-f]{24}$/);
    expect(created.json?.key).toMatch(/^pg_[0-9a-f]{64}$/);
    const store = sqliteStore(env.PROMPTGATE_DB!);
    try {
      const key = await store.keyOfSecret(sha256(String(created.json?.key)), Date.now());
      expect(key?.id).toBe(created.json?.id);
    } finally {
      await store.close();
    }
  });

  it("lists the store's keys then the file's, gets one, and never prints a secret", async () => {
    const env = environment();
    const first = await keys(env, "create", "--name", "first");
    const second = await keys(env, "create", "--name", "second");
    const listed = await keys(env, "list");
    expect(listed.code).toBe(0);
    const data = (listed.json as { data: Array<Record<string, unknown>> }).data;
    expect(data.map((key) => key.name)).toEqual(["first", "second", "from-file"]);
    expect(data[2]).toMatchObject({ id: await fileKeyId("from-file"), source: "file", team: "ops" });
    const got = await keys(env, "get", String(first.json?.id));
    expect(got.json).toMatchObject({ id: first.json?.id, name: "first" });
    for (const output of [listed.stdout, got.stdout]) {
      for (const created of [first, second]) {
        expect(output).not.toContain(String(created.json?.key));
        expect(output).not.toContain(sha256(String(created.json?.key)));
      }
      expect(output).not.toContain(fileSecretSha256);
    }
  });

  it("revokes a key and prints it with revoked_at, never its secret", async () => {
    const env = environment();
    const created = await keys(env, "create", "--name", "to-revoke");
    const revoked = await keys(env, "revoke", String(created.json?.id));
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ id: created.json?.id, name: "to-revoke" });
    expect(revoked.json?.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(revoked.json).not.toHaveProperty("key");
    expect(revoked.stdout).not.toContain(String(created.json?.key));
  });

  it("rotates a key and prints {id, key}; the old secret lasts the grace", async () => {
    const env = environment();
    const created = await keys(env, "create", "--name", "to-rotate");
    const before = Date.now();
    const rotated = await keys(env, "rotate", String(created.json?.id), "--grace-seconds", "3600");
    expect(rotated.code).toBe(0);
    expect(Object.keys(rotated.json ?? {})).toEqual(["id", "key"]);
    expect(rotated.json?.id).toBe(created.json?.id);
    expect(rotated.json?.key).toMatch(/^pg_[0-9a-f]{64}$/);
    expect(rotated.json?.key).not.toBe(created.json?.key);
    const store = sqliteStore(env.PROMPTGATE_DB!);
    try {
      const oldHash = sha256(String(created.json?.key));
      expect((await store.keyOfSecret(oldHash, before + 3_000_000))?.id).toBe(created.json?.id);
      expect(await store.keyOfSecret(oldHash, Date.now() + 3_601_000)).toBeUndefined();
      expect((await store.keyOfSecret(sha256(String(rotated.json?.key)), Date.now()))?.id).toBe(created.json?.id);
    } finally {
      await store.close();
    }
  });

  it("prints the SHA-256 of the secret read from stdin, without its line end", async () => {
    const output = capture();
    expect(await keysCommand(["hash"], output.io, async () => "pg_my-secret\n")).toBe(0);
    expect(output.stdout()).toBe(`${sha256("pg_my-secret")}\n`);
    const crlf = capture();
    expect(await keysCommand(["hash"], crlf.io, async () => "pg_my-secret\r\n")).toBe(0);
    expect(crlf.stdout()).toBe(output.stdout());
  });

  it("refuses to hash nothing, several lines, or a secret given as an argument", async () => {
    await expect(keysCommand(["hash"], capture().io, async () => "\n")).rejects.toThrow(/no secret/);
    await expect(keysCommand(["hash"], capture().io, async () => "a\nb\n")).rejects.toThrow(/one line/);
    const output = capture();
    expect(await main(["keys", "hash", "pg_secret"], output.io)).toBe(2);
    expect(output.stderr()).toContain("stdin");
    expect(output.stdout()).toBe("");
  });

  it("refuses a key of keys.toml, an unknown id and bad settings, with the exit codes of the help", async () => {
    const env = environment();
    const fileId = await fileKeyId("from-file");
    const readOnly = await keys(env, "revoke", fileId);
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain("keys.toml");
    expect((await keys(env, "rotate", fileId)).code).toBe(1);
    const unknown = await keys(env, "get", "key_000000000000000000000000");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No key has this id");
    const badPolicy = await keys(env, "create", "--name", "n", "--policy", "investigation.bounde");
    expect(badPolicy.code).toBe(2);
    expect(badPolicy.stderr).toContain('did you mean "investigation.bounded"?');
    const pastExpiry = await keys(env, "create", "--name", "n", "--expires", "2020-01-01T00:00:00Z");
    expect(pastExpiry.code).toBe(2);
    expect(pastExpiry.stderr).toContain("expires_at must lie in the future");
    expect((await keys(env, "rotate", fileId, "--grace-seconds", "-5")).code).toBe(2);
    expect(((await keys(env, "list")).json as { data: unknown[] }).data).toHaveLength(1);
  });

  it("refuses a missing name, a missing id, an unknown subcommand or option as usage errors", async () => {
    const env = environment();
    expect((await keys(env, "create")).code).toBe(2);
    expect((await keys(env, "revoke")).code).toBe(2);
    expect((await keys(env, "get", "a", "b")).code).toBe(2);
    expect((await keys(env, "destroy")).code).toBe(2);
    expect((await keys(env, "list", "--all")).code).toBe(2);
    expect((await keys(env)).code).toBe(2);
  });

  it("refuses a broken keys.toml naming the file and field", async () => {
    const env = { PROMPTGATE_DB: tempDatabase(), PROMPTGATE_POLICIES: copyPolicies({ "keys.toml": "[[key]]\n" }) };
    const listed = await keys(env, "list");
    expect(listed.code).toBe(2);
    expect(listed.stderr).toMatch(/keys\.toml: key\[0\]\.name: is required/);
  });

  it("prints its help, and the main help names it", async () => {
    const help = await keys({}, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("promptgate keys create --name NAME");
    const output = capture();
    expect(await main(["--help"], output.io)).toBe(0);
    expect(output.stdout()).toContain("promptgate keys create|list|get|revoke|rotate|hash");
  });
});
