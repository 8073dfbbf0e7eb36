import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fileKeyId, type KeyFileContext, parseKeyFile } from "../../src/keys/key-file.js";
import { keyObject } from "../../src/keys/key-object.js";
import { PolicyFileError } from "../../src/policy/policy-file-error.js";

const path = "/etc/promptgate/policies/keys.toml";
const context: KeyFileContext = {
  policyNames: ["default", "investigation.bounded"],
  providerNames: ["openai", "gemini", "anthropic"],
  credentialSet: (variable) => variable === "OPENAI_API_KEY_TEAM_A",
};
const hashA = "a".repeat(64);
const hashB = "b".repeat(64);

/** The refusal of a file: the field and the reason, checked to name the file. */
async function refusal(text: string): Promise<{ field: string; reason: string }> {
  try {
    await parseKeyFile(path, text, context);
  } catch (error) {
    if (!PolicyFileError.isInstance(error)) throw error;
    expect(error.file).toBe(path);
    expect(error.message.startsWith(`${path}: `)).toBe(true);
    return { field: error.field, reason: error.reason };
  }
  throw new Error("The file was taken.");
}

describe("keys.toml", () => {
  it("reads every member of a key", async () => {
    const keys = await parseKeyFile(
      path,
      `
[[key]]
id = "key_ci_team_a"
name = "team-a-ci"
team = "team-a"
policies = ["investigation.bounded"]
models = ["gpt-4.1*", "claude-*"]
credentials = { openai = "OPENAI_API_KEY_TEAM_A" }
expires_at = 2027-01-01T00:00:00Z
created_at = "2026-12-01T00:00:00Z"
limits = { requests_per_minute = 60 }
secret_sha256 = "${hashA}"
`,
      context,
    );
    expect(keys).toEqual([
      {
        secretSha256: hashA,
        key: {
          id: "key_ci_team_a",
          name: "team-a-ci",
          team: "team-a",
          policies: ["investigation.bounded"],
          models: ["gpt-4.1*", "claude-*"],
          credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
          limits: { requests_per_minute: 60 },
          createdAt: Date.parse("2026-12-01T00:00:00Z"),
          expiresAt: Date.parse("2027-01-01T00:00:00Z"),
          revokedAt: undefined,
          lastUsedAt: undefined,
          source: "file",
        },
      },
    ]);
  });

  it("gives a key without an id one derived from its name, the same on every read", async () => {
    const text = `[[key]]\nname = "batch"\nsecret_sha256 = "${hashA}"\n`;
    const [first] = await parseKeyFile(path, text, context);
    const [again] = await parseKeyFile(path, `# reloaded\n${text}`, context);
    const expected = `key_${createHash("sha256").update("file:batch").digest("hex").slice(0, 24)}`;
    expect(first?.key.id).toBe(expected);
    expect(again?.key.id).toBe(expected);
    expect(await fileKeyId("batch")).toBe(expected);
    expect(first?.key).toMatchObject({
      createdAt: 0,
      team: undefined,
      policies: [],
      models: [],
      credentials: {},
      limits: undefined,
      expiresAt: undefined,
    });
  });

  it("shows a file key without created_at as null, and never its secret's hash", async () => {
    const [fileKey] = await parseKeyFile(path, `[[key]]\nname = "batch"\nsecret_sha256 = "${hashA}"\n`, context);
    const shown = keyObject(fileKey!.key);
    expect(shown).toMatchObject({ created_at: null, source: "file", team: null, limits: null });
    expect(JSON.stringify(shown)).not.toContain(hashA);
  });

  it("takes an empty file, and keys in the file's order", async () => {
    expect(await parseKeyFile(path, "", context)).toEqual([]);
    const keys = await parseKeyFile(
      path,
      `[[key]]\nname = "one"\nsecret_sha256 = "${hashA}"\n\n[[key]]\nname = "two"\nsecret_sha256 = "${hashB}"\n`,
      context,
    );
    expect(keys.map((fileKey) => fileKey.key.name)).toEqual(["one", "two"]);
  });

  it("takes an expiry that has passed, and an offset date-time", async () => {
    const [fileKey] = await parseKeyFile(
      path,
      `[[key]]\nname = "old"\nexpires_at = 2020-01-01T01:00:00+01:00\nsecret_sha256 = "${hashA}"\n`,
      context,
    );
    expect(fileKey?.key.expiresAt).toBe(Date.parse("2020-01-01T00:00:00Z"));
  });

  const key = (members: string) => `[[key]]\nname = "n"\nsecret_sha256 = "${hashA}"\n${members}\n`;

  it.each([
    ["a syntax error", "[[key]\nname = 1", "(root)", /TOML syntax error at line 1/],
    ["a member beside the keys", `version = 1\n${key("")}`, "version", /only \[\[key\]\] tables/],
    ["key as a table", `[key]\nname = "n"`, "key", /array of tables/],
    ["key as an array of strings", `key = ["a"]`, "key", /array of tables/],
    [
      "a member a key does not take",
      key("secret = 'pg_x'"),
      "key[0].secret",
      /only the SHA-256 of a secret, as secret_sha256/,
    ],
    ["a misspelt member", key("polices = []"), "key[0].polices", /did you mean policies\?/],
    ["a revoked_at member", key("revoked_at = 2026-01-01T00:00:00Z"), "key[0].revoked_at", /not a member/],
    ["no name", `[[key]]\nsecret_sha256 = "${hashA}"`, "key[0].name", /is required/],
    ["an empty name", `[[key]]\nname = ""\nsecret_sha256 = "${hashA}"`, "key[0].name", /1 to 100/],
    ["no secret_sha256", `[[key]]\nname = "n"`, "key[0].secret_sha256", /64 lowercase hex/],
    [
      "an upper-case secret_sha256",
      `[[key]]\nname = "n"\nsecret_sha256 = "${"A".repeat(64)}"`,
      "key[0].secret_sha256",
      /64 lowercase hex/,
    ],
    ["a short secret_sha256", `[[key]]\nname = "n"\nsecret_sha256 = "abc"`, "key[0].secret_sha256", /64 lowercase hex/],
    ["a bad team", key('team = "a b"'), "key[0].team", /letters, digits/],
    ["an unknown policy", key('policies = ["defualt"]'), "key[0].policies[0]", /did you mean "default"\?/],
    ["an empty model glob", key('models = [""]'), "key[0].models[0]", /must not be empty/],
    [
      "a credential for no provider",
      key('credentials = { azure = "AZURE_KEY" }'),
      "key[0].credentials.azure",
      /not a provider/,
    ],
    [
      "an unset credential",
      key('credentials = { openai = "OTHER_KEY" }'),
      "key[0].credentials.openai",
      /OTHER_KEY, which is not set/,
    ],
    [
      "a PROMPTGATE_ credential",
      key('credentials = { openai = "PROMPTGATE_KEYS" }'),
      "key[0].credentials.openai",
      /PROMPTGATE_/,
    ],
    ["a limit of zero", key("limits = { concurrent = 0 }"), "key[0].limits.concurrent", /positive integer/],
    ["an unknown limit", key("limits = { per_minute = 1 }"), "key[0].limits.per_minute", /not a limit/],
    ["limits as a date", key("limits = 2027-01-01T00:00:00Z"), "key[0].limits", /object of limits/],
    ["a local expiry", key("expires_at = 2027-01-01T00:00:00"), "key[0].expires_at", /time zone/],
    ["an expiry as a date alone", key("expires_at = 2027-01-01"), "key[0].expires_at", /time zone/],
    ["an expiry as a number", key("expires_at = 1800000000"), "key[0].expires_at", /time zone/],
    ["an expiry string without a zone", key('expires_at = "2027-01-01T00:00:00"'), "key[0].expires_at", /time zone/],
    ["a created_at that is no date-time", key('created_at = "yesterday"'), "key[0].created_at", /time zone/],
    ["an id without the prefix", key('id = "ci"'), "key[0].id", /key_ followed by/],
    ["an id with a space", key('id = "key_a b"'), "key[0].id", /key_ followed by/],
    ["an id too long", key(`id = "key_${"x".repeat(65)}"`), "key[0].id", /1 to 64/],
    ["an id that is a number", key("id = 7"), "key[0].id", /key_ followed by/],
  ])("refuses %s, naming the field", async (_what, text, field, reason) => {
    const refused = await refusal(text);
    expect(refused.field).toBe(field);
    expect(refused.reason).toMatch(reason);
  });

  it("refuses two keys with one id, one name or one secret, naming the earlier", async () => {
    const sameId = `[[key]]\nid = "key_a"\nname = "one"\nsecret_sha256 = "${hashA}"\n[[key]]\nid = "key_a"\nname = "two"\nsecret_sha256 = "${hashB}"\n`;
    expect(await refusal(sameId)).toEqual({ field: "key[1].id", reason: "repeats the id of key[0]" });
    const sameName = `[[key]]\nname = "one"\nsecret_sha256 = "${hashA}"\n[[key]]\nid = "key_b"\nname = "one"\nsecret_sha256 = "${hashB}"\n`;
    expect(await refusal(sameName)).toEqual({ field: "key[1].name", reason: "repeats the name of key[0]" });
    const sameSecret = `[[key]]\nname = "one"\nsecret_sha256 = "${hashA}"\n[[key]]\nname = "two"\nsecret_sha256 = "${hashA}"\n`;
    expect(await refusal(sameSecret)).toEqual({
      field: "key[1].secret_sha256",
      reason: "repeats the secret of key[0]",
    });
  });

  it("refuses a given id that equals the id derived from another key's name", async () => {
    const derived = await fileKeyId("one");
    const text = `[[key]]\nname = "one"\nsecret_sha256 = "${hashA}"\n[[key]]\nid = "${derived}"\nname = "two"\nsecret_sha256 = "${hashB}"\n`;
    expect(await refusal(text)).toEqual({ field: "key[1].id", reason: "repeats the id of key[0]" });
  });
});
