import { describe, expect, it } from "vitest";
import {
  type KeySettingsContext,
  KeySettingsError,
  parseDateTime,
  readKeySettings,
} from "../../src/keys/key-settings.js";
import type { KeySettings } from "../../src/keys/named-key.js";
import { limitNames } from "../../src/policy/policy.js";

const now = Date.parse("2026-12-07T12:00:00Z");
const context: KeySettingsContext = {
  policyNames: ["default", "investigation.bounded"],
  providerNames: ["openai", "gemini", "anthropic"],
  credentialSet: (variable) => variable === "OPENAI_API_KEY_TEAM_A",
  now,
};

function create(body: unknown): KeySettings {
  return readKeySettings(body, context, { kind: "create" });
}

/** The refusal of a body on create: its field and reason. */
function refusal(body: unknown, mode: Parameters<typeof readKeySettings>[2] = { kind: "create" }) {
  try {
    readKeySettings(body, context, mode);
  } catch (error) {
    if (!KeySettingsError.isInstance(error)) throw error;
    return { field: error.field, reason: error.reason, message: error.message };
  }
  throw new Error("The settings were taken.");
}

const current: KeySettings = {
  name: "team-a-ci",
  team: "team-a",
  policies: ["investigation.bounded"],
  models: ["gpt-4.1*"],
  credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
  limits: { requests_per_minute: 60 },
  expiresAt: Date.parse("2027-01-01T00:00:00Z"),
};

describe("a key's settings on create", () => {
  it("takes the contract's example and reads every member", () => {
    expect(
      create({
        name: "team-a-ci",
        team: "team-a",
        policies: ["investigation.bounded"],
        models: ["gpt-4.1*", "claude-*"],
        credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
        expires_at: "2027-01-01T00:00:00Z",
        limits: { requests_per_minute: 60, chars_per_30_days: 1_000_000 },
      }),
    ).toEqual({
      name: "team-a-ci",
      team: "team-a",
      policies: ["investigation.bounded"],
      models: ["gpt-4.1*", "claude-*"],
      credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
      expiresAt: Date.parse("2027-01-01T00:00:00Z"),
      limits: { requests_per_minute: 60, chars_per_30_days: 1_000_000 },
    });
  });

  it("needs only a name, the rest empty or unset", () => {
    expect(create({ name: "n" })).toEqual({
      name: "n",
      team: undefined,
      policies: [],
      models: [],
      credentials: {},
      limits: undefined,
      expiresAt: undefined,
    });
  });

  it("takes null for an optional member as unset", () => {
    expect(create({ name: "n", team: null, expires_at: null, limits: null, policies: null })).toMatchObject({
      team: undefined,
      expiresAt: undefined,
      limits: undefined,
      policies: [],
    });
  });

  it("takes every limit of section 10", () => {
    const limits = Object.fromEntries(limitNames.map((name, index) => [name, index + 1]));
    expect(create({ name: "n", limits }).limits).toEqual(limits);
  });

  it.each([
    ["a body that is no object", [], "(root)", /JSON object/],
    ["a body that is null", null, "(root)", /JSON object/],
    ["no name", {}, "name", /is required/],
    ["a null name", { name: null }, "name", /must be a string/],
    ["a name that is no string", { name: 7 }, "name", /must be a string/],
    ["an empty name", { name: "" }, "name", /1 to 100 characters/],
    ["a name of 101 characters", { name: "x".repeat(101) }, "name", /1 to 100 characters/],
    ["a name with a newline", { name: "a\nb" }, "name", /control characters/],
    ["a name with a DEL", { name: "a\u007fb" }, "name", /control characters/],
    ["a name with a C1 control", { name: "a\u0085b" }, "name", /control characters/],
    ["an unknown member", { name: "n", nmae: "x" }, "nmae", /did you mean name\?/],
    ["an unknown member far from any", { name: "n", colour: "red" }, "colour", /a key takes name, team/],
    ["a team with a space", { name: "n", team: "team a" }, "team", /letters, digits/],
    ["a team starting with a dot", { name: "n", team: ".a" }, "team", /starting with a letter or digit/],
    ["a team of 65 characters", { name: "n", team: "a".repeat(65) }, "team", /1 to 64/],
    ["an empty team", { name: "n", team: "" }, "team", /1 to 64/],
    ["a team that is a number", { name: "n", team: 1 }, "team", /1 to 64/],
    ["policies that are a string", { name: "n", policies: "default" }, "policies", /array of policy names/],
    ["a policy that is a number", { name: "n", policies: [1] }, "policies[0]", /must be a string/],
    ["a repeated policy", { name: "n", policies: ["default", "default"] }, "policies[1]", /repeats/],
    ["models that are an object", { name: "n", models: {} }, "models", /array of model globs/],
    ["an empty model glob", { name: "n", models: ["gpt-*", ""] }, "models[1]", /must not be empty/],
    ["a model glob of 201 characters", { name: "n", models: ["m".repeat(201)] }, "models[0]", /at most 200/],
    ["a repeated model glob", { name: "n", models: ["a*", "a*"] }, "models[1]", /repeats/],
    ["a model glob that is null", { name: "n", models: [null] }, "models[0]", /must be a string/],
    ["credentials that are an array", { name: "n", credentials: [] }, "credentials", /must be an object/],
    [
      "a credential for no provider",
      { name: "n", credentials: { openia: "OPENAI_API_KEY_TEAM_A" } },
      "credentials.openia",
      /not a provider \(did you mean openai\?\)/,
    ],
    [
      "a credential variable in lower case",
      { name: "n", credentials: { openai: "openai_key" } },
      "credentials.openai",
      /capital letters/,
    ],
    [
      "a credential variable starting with a digit",
      { name: "n", credentials: { openai: "1KEY" } },
      "credentials.openai",
      /capital letters/,
    ],
    ["a credential that is no string", { name: "n", credentials: { openai: 1 } }, "credentials.openai", /capital/],
    [
      "a PROMPTGATE_ credential variable",
      { name: "n", credentials: { openai: "PROMPTGATE_ADMIN_KEY" } },
      "credentials.openai",
      /PROMPTGATE_ variable cannot hold a credential/,
    ],
    [
      "an unset credential variable",
      { name: "n", credentials: { gemini: "GEMINI_KEY_TEAM_B" } },
      "credentials.gemini",
      /names GEMINI_KEY_TEAM_B, which is not set/,
    ],
    ["expires_at that is a number", { name: "n", expires_at: 1_800_000_000_000 }, "expires_at", /ISO-8601/],
    ["expires_at without a time zone", { name: "n", expires_at: "2027-01-01T00:00:00" }, "expires_at", /ISO-8601/],
    ["expires_at as a date alone", { name: "n", expires_at: "2027-01-01" }, "expires_at", /ISO-8601/],
    ["expires_at on February 30th", { name: "n", expires_at: "2027-02-30T00:00:00Z" }, "expires_at", /ISO-8601/],
    ["expires_at at hour 24", { name: "n", expires_at: "2027-01-01T24:00:00Z" }, "expires_at", /ISO-8601/],
    ["expires_at in the past", { name: "n", expires_at: "2026-12-07T11:59:59Z" }, "expires_at", /in the future/],
    ["expires_at at this moment", { name: "n", expires_at: "2026-12-07T12:00:00Z" }, "expires_at", /in the future/],
    ["limits that are an array", { name: "n", limits: [] }, "limits", /object of limits/],
    [
      "a limit that is unknown",
      { name: "n", limits: { request_per_minute: 1 } },
      "limits.request_per_minute",
      /did you mean requests_per_minute/,
    ],
    ["a limit of 0", { name: "n", limits: { concurrent: 0 } }, "limits.concurrent", /positive integer/],
    ["a negative limit", { name: "n", limits: { concurrent: -1 } }, "limits.concurrent", /positive integer/],
    ["a fractional limit", { name: "n", limits: { concurrent: 1.5 } }, "limits.concurrent", /positive integer/],
    ["a limit as a string", { name: "n", limits: { concurrent: "5" } }, "limits.concurrent", /positive integer/],
    ["a limit past safe integers", { name: "n", limits: { concurrent: 2 ** 53 } }, "limits.concurrent", /positive/],
  ])("refuses %s, naming the field", (_what, body, field, reason) => {
    const refused = refusal(body);
    expect(refused.field).toBe(field);
    expect(refused.reason).toMatch(reason);
  });

  it("refuses more than 100 model globs", () => {
    const models = Array.from({ length: 101 }, (_, index) => `m${index}*`);
    expect(refusal({ name: "n", models })).toMatchObject({
      field: "models",
      reason: expect.stringMatching(/at most 100/),
    });
    expect(create({ name: "n", models: models.slice(0, 100) }).models).toHaveLength(100);
  });

  it("names an unknown policy and the known one nearest to it", () => {
    const refused = refusal({ name: "n", policies: ["default", "investigation.bounde"] });
    expect(refused.field).toBe("policies[1]");
    expect(refused.reason).toContain('"investigation.bounde"');
    expect(refused.reason).toContain('did you mean "investigation.bounded"?');
  });

  it("lists the known policies where none is near", () => {
    expect(refusal({ name: "n", policies: ["something-else"] }).reason).toContain(
      "known policies: default, investigation.bounded",
    );
  });

  it("never names a credential's value, only its variable", () => {
    const secretContext = { ...context, credentialSet: () => false };
    try {
      readKeySettings({ name: "n", credentials: { openai: "TEAM_KEY" } }, secretContext, { kind: "create" });
    } catch (error) {
      expect((error as Error).message).toBe(
        "credentials.openai names TEAM_KEY, which is not set in the gateway's environment",
      );
      return;
    }
    throw new Error("The settings were taken.");
  });
});

describe("a key's settings on update", () => {
  const update = { kind: "update", current } as const;

  it("keeps every member the body does not give", () => {
    expect(readKeySettings({}, context, update)).toEqual(current);
  });

  it("replaces the given members and clears the nulled ones", () => {
    expect(
      readKeySettings({ name: "renamed", team: null, limits: null, expires_at: null, models: ["o3"] }, context, update),
    ).toEqual({
      ...current,
      name: "renamed",
      team: undefined,
      limits: undefined,
      expiresAt: undefined,
      models: ["o3"],
    });
  });

  it("replaces limits as a whole", () => {
    expect(readKeySettings({ limits: { concurrent: 2 } }, context, update).limits).toEqual({ concurrent: 2 });
  });

  it("takes an expiry that has passed (to end a key's life by date)", () => {
    expect(readKeySettings({ expires_at: "2020-01-01T00:00:00Z" }, context, update).expiresAt).toBe(
      Date.parse("2020-01-01T00:00:00Z"),
    );
  });

  it("does not check members it is not given (a policy since removed stays)", () => {
    const stale = { ...current, policies: ["removed.policy"] };
    expect(readKeySettings({ team: "team-b" }, context, { kind: "update", current: stale }).policies).toEqual([
      "removed.policy",
    ]);
  });

  it("refuses a null name and unknown members", () => {
    expect(refusal({ name: null }, update)).toMatchObject({ field: "name" });
    expect(refusal({ id: "key_x" }, update)).toMatchObject({ field: "id" });
    expect(refusal({ revoked_at: null }, update)).toMatchObject({ field: "revoked_at" });
  });
});

describe("a key's settings in keys.toml", () => {
  it("takes an expiry that has passed", () => {
    expect(
      readKeySettings({ name: "n", expires_at: "2020-01-01T00:00:00Z" }, context, { kind: "file" }).expiresAt,
    ).toBe(Date.parse("2020-01-01T00:00:00Z"));
  });

  it("needs a name", () => {
    expect(refusal({}, { kind: "file" })).toMatchObject({ field: "name" });
  });
});

describe("parseDateTime", () => {
  it.each([
    ["2027-01-01T00:00:00Z", Date.UTC(2027, 0, 1)],
    ["2027-01-01T00:00Z", Date.UTC(2027, 0, 1)],
    ["2027-01-01T01:30:00+01:30", Date.UTC(2027, 0, 1)],
    ["2027-01-01T00:00:00.250Z", Date.UTC(2027, 0, 1) + 250],
    ["2028-02-29T00:00:00Z", Date.UTC(2028, 1, 29)],
  ])("reads %s", (text, time) => {
    expect(parseDateTime(text)).toBe(time);
  });

  it.each([
    "2027-02-29T00:00:00Z",
    "2027-04-31T00:00:00Z",
    "2027-13-01T00:00:00Z",
    "2027-00-01T00:00:00Z",
    "2027-01-01T00:60:00Z",
    "2027-01-01T00:00:60Z",
    "2027-01-01T00:00:00+24:00",
    "2027-01-01 00:00:00Z",
    "2027-01-01T00:00:00",
    "tomorrow",
    "",
  ])("refuses %s", (text) => {
    expect(parseDateTime(text)).toBeUndefined();
  });
});
