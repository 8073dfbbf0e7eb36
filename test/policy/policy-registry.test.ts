import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { Policy, PolicyVersion } from "../../src/policy/policy.js";
import { createPolicyRegistry } from "../../src/policy/policy-registry.js";

function policy(name: string, limitChars = 20000): Policy {
  return {
    name,
    window: { enforce: true, target_chars: 10000, limit_chars: limitChars, reserve_chars: 1500 },
    gemini: { projection: "nested", schema_field: "responseJsonSchema" },
    validation: { enabled: true, on_invalid: "error" },
    repair: [],
    cache: { unknown_prefix: "reject", chars_per_token: 4 },
    upstream_errors: { text: "redacted" },
  };
}

function version(name: string, sha256: string, limitChars?: number): PolicyVersion {
  return { policy: policy(name, limitChars), sha256, ref: `${name}@${sha256.slice(0, 12)}`, source: `${name}.toml` };
}

const currentSha = `3f2a9c1b0d4e${"a".repeat(52)}`;
const earlierSha = `0123456789ab${"b".repeat(52)}`;
const current = version("investigation.bounded", currentSha);
const earlier = version("investigation.bounded", earlierSha, 30000);

function notFound(resolve: () => unknown): GatewayError {
  try {
    resolve();
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a GatewayError");
}

describe("createPolicyRegistry", () => {
  it("resolves a plain name to its current version", () => {
    const registry = createPolicyRegistry([current], [earlier]);
    expect(registry.resolve("investigation.bounded")).toBe(current);
  });

  it("resolves a version pinned by the first 12 hex digits of its sha256", () => {
    const registry = createPolicyRegistry([current], [earlier]);
    expect(registry.resolve("investigation.bounded@0123456789ab")).toBe(earlier);
  });

  it("resolves a version pinned by its full sha256", () => {
    const registry = createPolicyRegistry([current], [earlier]);
    expect(registry.resolve(`investigation.bounded@${currentSha}`)).toBe(current);
  });

  it("resolves a version pinned by its ref", () => {
    const registry = createPolicyRegistry([current]);
    expect(registry.resolve(current.ref)).toBe(current);
  });

  it("resolves an added earlier version when pinned while the plain name keeps the current one", () => {
    const registry = createPolicyRegistry([current]);
    registry.add(earlier);
    expect(registry.resolve(earlier.ref)).toBe(earlier);
    expect(registry.resolve("investigation.bounded")).toBe(current);
  });

  it("resolves a pinned version whose name has no current version", () => {
    const registry = createPolicyRegistry([], [earlier]);
    expect(registry.resolve(earlier.ref)).toBe(earlier);
  });

  it("lists every known version once, in the order they became known", () => {
    const registry = createPolicyRegistry([current], [earlier]);
    registry.add(version("investigation.bounded", currentSha));
    expect(registry.list()).toEqual([current, earlier]);
  });

  it("refuses two current versions of one name", () => {
    expect(() => createPolicyRegistry([current, earlier])).toThrow();
  });

  it("answers an unknown name with POLICY_NOT_FOUND and status 404", () => {
    const error = notFound(() => createPolicyRegistry([current]).resolve("nonexistent"));
    expect(error.code).toBe("POLICY_NOT_FOUND");
    expect(error.status).toBe(404);
  });

  it("answers an unknown version of a known name with POLICY_NOT_FOUND and status 404", () => {
    const error = notFound(() => createPolicyRegistry([current]).resolve("investigation.bounded@ffffffffffff"));
    expect(error.code).toBe("POLICY_NOT_FOUND");
    expect(error.status).toBe(404);
  });

  it("answers a known version under another name with POLICY_NOT_FOUND", () => {
    const registry = createPolicyRegistry([current, version("default", earlierSha)]);
    expect(notFound(() => registry.resolve("investigation.bounded@0123456789ab")).code).toBe("POLICY_NOT_FOUND");
  });

  it("answers a pin of fewer than 12 hex digits with POLICY_NOT_FOUND", () => {
    const registry = createPolicyRegistry([current]);
    expect(notFound(() => registry.resolve("investigation.bounded@3f2a9c1b0d4")).code).toBe("POLICY_NOT_FOUND");
  });

  it("answers a prefix that matches more than one version with POLICY_NOT_FOUND", () => {
    const twin = version("investigation.bounded", `3f2a9c1b0d4e${"c".repeat(52)}`, 40000);
    const registry = createPolicyRegistry([current], [twin]);
    expect(notFound(() => registry.resolve("investigation.bounded@3f2a9c1b0d4e")).code).toBe("POLICY_NOT_FOUND");
  });

  it("does not echo the requested ref in its message", () => {
    const registry = createPolicyRegistry([current]);
    for (const ref of ["<script>alert(1)</script>", "investigation.bounded@ffffffffffff"]) {
      expect(notFound(() => registry.resolve(ref)).message).not.toContain(ref);
    }
  });
});
