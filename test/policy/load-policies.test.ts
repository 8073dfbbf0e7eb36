import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";
import type { PolicyVersion } from "../../src/policy/policy.js";

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

const shippedNames = ["default", "investigation.bounded", "investigation.bounded.v1", "case.interpretation"];

function shippedFile(name: string) {
  const path = `policies/${name}.toml`;
  return { path, text: readFileSync(new URL(`../../${path}`, import.meta.url), "utf8") };
}

async function loadShipped(name: string): Promise<PolicyVersion> {
  return (await loadPolicies([shippedFile(name)], policySchema)).resolve(name);
}

async function loadText(text: string, path = "test.toml"): Promise<PolicyVersion> {
  const [version] = (await loadPolicies([{ path, text }], policySchema)).list();
  return version!;
}

async function refusal(text: string, path = "bad.toml"): Promise<PolicyFileError> {
  const error = await loadPolicies([{ path, text }], policySchema).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!PolicyFileError.isInstance(error)) throw new Error("expected a PolicyFileError");
  return error;
}

const minimal = `
name = "minimal"

[window]
enforce = true
target_chars = 10
limit_chars = 20
reserve_chars = 5
`;

describe("loadPolicies with the shipped files", () => {
  it("loads all four shipped files under their names", async () => {
    const registry = await loadPolicies(shippedNames.map(shippedFile), policySchema);
    expect(registry.list().map((version) => version.policy.name)).toEqual(shippedNames);
  });

  it("loads default as an enforced 50,000 / 200,000 / 2,000 window that annotates invalid responses", async () => {
    const { policy } = await loadShipped("default");
    expect(policy.window).toEqual({ enforce: true, target_chars: 50000, limit_chars: 200000, reserve_chars: 2000 });
    expect(policy.validation).toEqual({ enabled: true, on_invalid: "annotate" });
  });

  it("loads investigation.bounded as the v2 representation with the seed's one repair rule", async () => {
    const { policy } = await loadShipped("investigation.bounded");
    expect(policy).toEqual({
      name: "investigation.bounded",
      description: expect.any(String),
      window: {
        enforce: true,
        target_chars: 10000,
        limit_chars: 20000,
        reserve_chars: 1500,
        unknown_fields: "reject",
        max_media_parts: 0,
      },
      gemini: { projection: "nested", schema_field: "responseJsonSchema", unions: "common_shape" },
      validation: { enabled: true, on_invalid: "error" },
      repair: [
        {
          name: "unwrap-query-choices",
          at: "/next/arguments",
          when: { pointer: "/next/action", equals: "tool/project.query" },
          envelope: "choices",
          require_key: "kind",
        },
      ],
      cache: { unknown_prefix: "reject", chars_per_token: 5 },
      upstream_errors: { text: "redacted" },
    });
  });

  it("loads investigation.bounded.v1 with the same window, the outer projection and no repair rule", async () => {
    const { policy } = await loadShipped("investigation.bounded.v1");
    expect(policy.window).toEqual({ enforce: true, target_chars: 10000, limit_chars: 20000, reserve_chars: 1500 });
    expect(policy.gemini).toMatchObject({ projection: "outer" });
    expect(policy.validation).toEqual({
      enabled: true,
      on_invalid: "error",
      schemas: ["investigation_bootstrap_v21"],
    });
    expect(policy.repair).toEqual([]);
  });

  it("loads case.interpretation as a measure-only 100,000 / 1,000,000 / 0 window", async () => {
    const { policy } = await loadShipped("case.interpretation");
    expect(policy.window).toEqual({ enforce: false, target_chars: 100000, limit_chars: 1000000, reserve_chars: 0 });
    expect(policy.gemini).toMatchObject({ projection: "nested" });
    expect(policy.validation).toEqual({ enabled: true, on_invalid: "annotate" });
  });

  it("returns a registry that resolves each loaded version by its ref and by its full sha256", async () => {
    const registry = await loadPolicies(shippedNames.map(shippedFile), policySchema);
    for (const version of registry.list()) {
      expect(registry.resolve(version.ref)).toBe(version);
      expect(registry.resolve(`${version.policy.name}@${version.sha256}`)).toBe(version);
    }
  });

  it("redacts upstream error text in every shipped policy", async () => {
    const registry = await loadPolicies(shippedNames.map(shippedFile), policySchema);
    for (const version of registry.list()) expect(version.policy.upstream_errors.text).toBe("redacted");
  });
});

describe("loadPolicies defaults", () => {
  it("fills every omitted section with its documented default", async () => {
    const { policy } = await loadText(minimal);
    expect(policy).toEqual({
      name: "minimal",
      window: { enforce: true, target_chars: 10, limit_chars: 20, reserve_chars: 5 },
      gemini: { projection: "nested", schema_field: "responseJsonSchema" },
      validation: { enabled: true, on_invalid: "annotate" },
      repair: [],
      cache: { unknown_prefix: "reject", chars_per_token: 5 },
      upstream_errors: { text: "redacted" },
    });
  });

  it("fills the omitted members of a section that is partly given", async () => {
    const { policy } = await loadText(`${minimal}\n[gemini]\nprojection = "outer"\n`);
    expect(policy.gemini).toEqual({ projection: "outer", schema_field: "responseJsonSchema" });
  });

  it("freezes a loaded policy so that no caller can change it", async () => {
    const { policy } = await loadText(minimal);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.window)).toBe(true);
    expect(Object.isFrozen(policy.repair)).toBe(true);
  });
});

describe("loadPolicies identity", () => {
  it("is the sha256 of the canonical JSON of the effective policy, with a ref of its first 12 hex digits", async () => {
    const version = await loadText(minimal);
    const expected = createHash("sha256").update(canonicalJson(version.policy)).digest("hex");
    expect(version.sha256).toBe(expected);
    expect(version.ref).toBe(`minimal@${expected.slice(0, 12)}`);
  });

  it("records the file a version was loaded from", async () => {
    const version = await loadText(minimal, "policies/minimal.toml");
    expect(version.source).toBe("policies/minimal.toml");
  });

  it("stays the same when only whitespace and comments change", async () => {
    const reformatted = `# a comment\nname   =   "minimal"   # trailing\n\n\n[window]\n  enforce = true\n  target_chars = 10\n  limit_chars = 20\n  reserve_chars = 5\n`;
    expect((await loadText(reformatted)).sha256).toBe((await loadText(minimal)).sha256);
  });

  it("stays the same when keys and tables are reordered", async () => {
    const first = `${minimal}\n[gemini]\nschema_field = "responseSchema"\nprojection = "outer"\n`;
    const second = `name = "minimal"\n[gemini]\nprojection = "outer"\nschema_field = "responseSchema"\n[window]\nreserve_chars = 5\nlimit_chars = 20\ntarget_chars = 10\nenforce = true\n`;
    expect((await loadText(second)).sha256).toBe((await loadText(first)).sha256);
  });

  it("stays the same whether a default is written out or omitted", async () => {
    const explicit = `${minimal}\n[cache]\nunknown_prefix = "reject"\nchars_per_token = 5\n`;
    expect((await loadText(explicit)).sha256).toBe((await loadText(minimal)).sha256);
  });

  it("changes when a value changes", async () => {
    const changed = minimal.replace("reserve_chars = 5", "reserve_chars = 6");
    expect((await loadText(changed)).sha256).not.toBe((await loadText(minimal)).sha256);
  });

  it("differs between investigation.bounded and its v1 predecessor", async () => {
    const current = await loadShipped("investigation.bounded");
    const predecessor = await loadShipped("investigation.bounded.v1");
    expect(current.sha256).not.toBe(predecessor.sha256);
  });
});

describe("loadPolicies refusals", () => {
  it("refuses a value of the wrong type, naming the file and the field", async () => {
    const error = await refusal(minimal.replace("limit_chars = 20", 'limit_chars = "20"'));
    expect(error.file).toBe("bad.toml");
    expect(error.field).toBe("window.limit_chars");
    expect(error.message).toBe("bad.toml: window.limit_chars: must be an integer");
  });

  it("refuses an unknown key, naming it as the field", async () => {
    const error = await refusal(`${minimal}\n[gemini]\nprojetion = "outer"\n`);
    expect(error.field).toBe("gemini.projetion");
    expect(error.reason).toBe("is an unknown key (did you mean projection?)");
  });

  it("refuses an unknown top-level key", async () => {
    const error = await refusal(`temperature = 0.2\n${minimal}`);
    expect(error.field).toBe("temperature");
  });

  it("refuses a value outside an enumeration, listing the allowed ones", async () => {
    const error = await refusal(`${minimal}\n[gemini]\nprojection = "deep"\n`);
    expect(error.field).toBe("gemini.projection");
    expect(error.reason).toBe('must be one of "nested", "outer" or "none"');
  });

  it("refuses a file without a window", async () => {
    const error = await refusal('name = "minimal"\n');
    expect(error.field).toBe("window");
    expect(error.reason).toBe("is required");
  });

  it("refuses a file without a name", async () => {
    const error = await refusal(minimal.replace('name = "minimal"', ""));
    expect(error.field).toBe("name");
  });

  it("refuses a name outside the allowed pattern", async () => {
    const error = await refusal(minimal.replace('name = "minimal"', 'name = "Minimal Policy"'));
    expect(error.field).toBe("name");
  });

  it("refuses a negative character count", async () => {
    const error = await refusal(minimal.replace("reserve_chars = 5", "reserve_chars = -1"));
    expect(error.field).toBe("window.reserve_chars");
    expect(error.reason).toBe("must be >= 0");
  });

  it("refuses chars_per_token that is not above zero", async () => {
    const error = await refusal(`${minimal}\n[cache]\nchars_per_token = 0\n`);
    expect(error.field).toBe("cache.chars_per_token");
  });

  it("refuses a repair rule whose pointer does not start with a slash", async () => {
    const rule = `[[repair]]\nname = "r"\nat = "next/arguments"\nwhen = { pointer = "/next/action", equals = "x" }\nenvelope = "choices"\nrequire_key = "kind"\n`;
    const error = await refusal(`${minimal}\n${rule}`);
    expect(error.field).toBe("repair[0].at");
  });

  it("refuses a repair rule without require_key", async () => {
    const rule = `[[repair]]\nname = "r"\nat = "/next/arguments"\nwhen = { pointer = "/next/action", equals = "x" }\nenvelope = "choices"\n`;
    const error = await refusal(`${minimal}\n${rule}`);
    expect(error.field).toBe("repair[0].require_key");
  });

  it("refuses a target above the limit", async () => {
    const error = await refusal(minimal.replace("target_chars = 10", "target_chars = 21"));
    expect(error.field).toBe("window.target_chars");
    expect(error.message).toBe("bad.toml: window.target_chars: must not exceed window.limit_chars");
  });

  it("refuses a reserve that is not below the limit", async () => {
    const error = await refusal(minimal.replace("reserve_chars = 5", "reserve_chars = 20"));
    expect(error.field).toBe("window.reserve_chars");
  });

  it("refuses a TOML syntax error, naming the file and the line", async () => {
    const error = await refusal('name = "minimal"\n[window\nenforce = true\n');
    expect(error.file).toBe("bad.toml");
    expect(error.field).toBe("(root)");
    expect(error.reason).toMatch(/^TOML syntax error at line 2, column \d+: /);
  });

  it("refuses a second file with a name already loaded, naming the second file", async () => {
    const files = [
      { path: "first.toml", text: minimal },
      { path: "second.toml", text: minimal.replace("reserve_chars = 5", "reserve_chars = 6") },
    ];
    const error = await loadPolicies(files, policySchema).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PolicyFileError);
    expect((error as PolicyFileError).file).toBe("second.toml");
    expect((error as PolicyFileError).field).toBe("name");
  });

  it("refuses two repair rules with one name", async () => {
    const rule = `[[repair]]\nname = "r"\nat = "/a"\nwhen = { pointer = "/b", equals = true }\nenvelope = "choices"\nrequire_key = "kind"\n`;
    const error = await refusal(`${minimal}\n${rule}\n${rule}`);
    expect(error.field).toBe("repair[1].name");
  });

  it("does not repeat the offending value in its message", async () => {
    const error = await refusal(minimal.replace("limit_chars = 20", 'limit_chars = "secret-looking-value"'));
    expect(error.message).not.toContain("secret-looking-value");
  });
});
