import { createHash } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import type { FileKey } from "../../src/keys/named-key.js";
import { createKeyRing } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies, modelTable } from "../../src/runtime/workers/generated/assets.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import { testSchemaValidators } from "../support/schema-validators.js";

const adminKey = "admin-key-for-key-tests";
const start = Date.parse("2026-12-07T12:00:00Z");
const fileKey: FileKey = {
  secretSha256: "c".repeat(64),
  key: {
    id: "key_from_file",
    name: "file-key",
    team: "ops",
    policies: [],
    models: [],
    credentials: {},
    limits: undefined,
    createdAt: 0,
    expiresAt: undefined,
    revokedAt: undefined,
    lastUsedAt: undefined,
    source: "file",
  },
};
/** The server's secrets: a key's credentials may name only a variable set here. */
const secrets: Record<string, string> = { OPENAI_API_KEY_TEAM_A: "sk-team-a-value" };

let clock: number;
let store: Store;
let app: ReturnType<typeof createApp>;

/**
 * The app with a memory store, a fixed clock, one key of keys.toml, and the runtime's members that key management
 * reads (`keyRing`, `secretNamed`) added beside the dependencies every app has.
 */
async function keyApp(environment: Record<string, string>): Promise<ReturnType<typeof createApp>> {
  store = memoryStore();
  const base: Omit<Deps, "keyRing" | "secretNamed"> = {
    config: readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...environment }),
    policies: await identifyPolicies(bundledPolicies),
    models: modelTableOf(modelTable, surfaces),
    surfaces,
    transport: fetchTransport(createSimulatedProvider().fetch),
    jsonScanner: new JsonScanner(),
    schemas: new Map(),
    schemaValidators: testSchemaValidators,
    store,
    recordCall: async () => {},
    newRef,
    now: () => new Date(clock),
  };
  const runtime = {
    keyRing: createKeyRing({ store, unnamedKeys: [], fileKeys: [fileKey] }),
    secretNamed: (variable: string) => secrets[variable],
  };
  return createApp({ ...base, ...runtime });
}

beforeEach(async () => {
  clock = start;
  app = await keyApp({ PROMPTGATE_ADMIN_KEY: adminKey });
});

async function call(method: string, path: string, body?: unknown, key = adminKey): Promise<Response> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}` } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  return app.request(`/promptgate/admin/keys${path}`, init);
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Creates a key and answers its id and secret. */
async function created(body: unknown = { name: "team-a-ci" }): Promise<{ id: string; secret: string }> {
  const response = await call("POST", "", body);
  expect(response.status).toBe(201);
  const answer = await json(response);
  return { id: String(answer.id), secret: String(answer.key) };
}

/** Expects a refusal in the admin routes' error shape, and answers its message. */
async function refused(response: Response, status: number, code: string): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const ref = response.headers.get("x-promptgate-ref");
  expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
  const body = (await response.json()) as { error: { code: string; message: string; promptgate: unknown } };
  expect(body.error.code).toBe(code);
  expect(body.error.promptgate).toMatchObject({ code, ref, retryable: false });
  return body.error.message;
}

describe("the admin key guards the key routes", () => {
  it("refuses a request without the admin key", async () => {
    const response = await call("GET", "", undefined, "wrong");
    expect(response.status).toBe(401);
    expect((await call("POST", "", { name: "n" }, "wrong")).status).toBe(401);
    expect(await store.listKeys()).toEqual([]);
  });

  it("has no key routes without a configured admin key", async () => {
    app = await keyApp({});
    expect((await call("GET", "")).status).toBe(404);
  });
});

describe("POST /promptgate/admin/keys", () => {
  it("answers 201 with the id, the secret once, and the key object", async () => {
    const response = await call("POST", "", {
      name: "team-a-ci",
      team: "team-a",
      policies: ["investigation.bounded"],
      models: ["gpt-4.1*", "claude-*"],
      credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
      expires_at: "2027-01-01T00:00:00Z",
      limits: { requests_per_minute: 60 },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_/);
    const answer = await json(response);
    expect(Object.keys(answer)).toEqual([
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
    expect(answer).toMatchObject({
      name: "team-a-ci",
      team: "team-a",
      policies: ["investigation.bounded"],
      models: ["gpt-4.1*", "claude-*"],
      credentials: { openai: "OPENAI_API_KEY_TEAM_A" },
      limits: { requests_per_minute: 60 },
      created_at: "2026-12-07T12:00:00.000Z",
      expires_at: "2027-01-01T00:00:00.000Z",
      revoked_at: null,
      last_used_at: null,
      source: "api",
    });
    expect(answer.id).toMatch(/^key_[0-9a-f]{24}$/);
    expect(answer.key).toMatch(/^pg_[0-9a-f]{64}$/);
    expect(JSON.stringify(answer)).not.toContain(secrets.OPENAI_API_KEY_TEAM_A);
  });

  it("gives the store the secret's SHA-256 only", async () => {
    const { id, secret } = await created();
    expect((await store.keyOfSecret(sha256(secret), clock))?.id).toBe(id);
    expect(await store.keyOfSecret(secret, clock)).toBeUndefined();
    expect(JSON.stringify(await store.listKeys())).not.toContain(secret);
  });

  it("makes a new id and secret for every key", async () => {
    const first = await created({ name: "one" });
    const second = await created({ name: "two" });
    expect(first.id).not.toBe(second.id);
    expect(first.secret).not.toBe(second.secret);
  });

  it("shows an unset team and limits as null", async () => {
    const answer = await json(await call("POST", "", { name: "plain" }));
    expect(answer).toMatchObject({ team: null, limits: null, policies: [], models: [], credentials: {} });
  });

  it.each([
    ["no name", {}, /name is required/],
    ["an unknown member", { name: "n", polices: [] }, /polices is not a setting of a key \(did you mean policies\?\)/],
    ["a bad team", { name: "n", team: "a b" }, /team must be/],
    ["an unknown policy", { name: "n", policies: ["investigation.bounde"] }, /did you mean "investigation.bounded"\?/],
    ["a past expiry", { name: "n", expires_at: "2026-12-07T11:00:00Z" }, /expires_at must lie in the future/],
    ["a limit of zero", { name: "n", limits: { concurrent: 0 } }, /limits.concurrent must be a positive integer/],
    ["a credential for no provider", { name: "n", credentials: { azure: "AZURE_KEY" } }, /credentials.azure/],
    ["an array", [], /JSON object/],
  ])("refuses %s with 400 INVALID_REQUEST naming the field", async (_what, body, message) => {
    expect(await refused(await call("POST", "", body), 400, "INVALID_REQUEST")).toMatch(message);
    expect(await store.listKeys()).toEqual([]);
  });

  it("refuses a credential whose variable is not set, naming the variable only", async () => {
    const message = await refused(
      await call("POST", "", { name: "n", credentials: { openai: "OPENAI_API_KEY_TEAM_B" } }),
      400,
      "INVALID_REQUEST",
    );
    expect(message).toContain("OPENAI_API_KEY_TEAM_B");
    expect(message).toContain("not set");
  });

  it("refuses a body that is not JSON, and an empty one", async () => {
    expect(await refused(await call("POST", "", "{name"), 400, "INVALID_REQUEST")).toMatch(/not valid JSON/);
    expect(await refused(await call("POST", "", ""), 400, "INVALID_REQUEST")).toMatch(/JSON object/);
  });
});

describe("GET /promptgate/admin/keys", () => {
  it("lists the store's keys in the order made, then the file's, never a secret or hash", async () => {
    const first = await created({ name: "first" });
    clock += 1000;
    const second = await created({ name: "second" });
    const answer = (await json(await call("GET", ""))) as { data: Array<Record<string, unknown>> };
    expect(answer.data.map((key) => key.id)).toEqual([first.id, second.id, "key_from_file"]);
    expect(answer.data[2]).toMatchObject({ name: "file-key", team: "ops", source: "file", created_at: null });
    const text = JSON.stringify(answer);
    for (const secret of [first.secret, second.secret]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(sha256(secret));
    }
    expect(text).not.toContain(fileKey.secretSha256);
    expect(answer.data.every((key) => !("key" in key))).toBe(true);
  });

  it("answers one key by its id, the store's or the file's; 404 for an unknown id", async () => {
    const { id, secret } = await created({ name: "one" });
    const one = await json(await call("GET", `/${id}`));
    expect(one).toMatchObject({ id, name: "one", source: "api", revoked_at: null });
    expect(JSON.stringify(one)).not.toContain(secret);
    expect(await json(await call("GET", "/key_from_file"))).toMatchObject({ id: "key_from_file", source: "file" });
    await refused(await call("GET", "/key_000000000000000000000000"), 404, "NOT_FOUND");
  });
});

describe("PATCH /promptgate/admin/keys/{id}", () => {
  it("replaces the given members, clears the nulled ones, keeps the rest", async () => {
    const { id } = await created({
      name: "ci",
      team: "team-a",
      models: ["gpt-*"],
      limits: { concurrent: 2 },
      expires_at: "2027-01-01T00:00:00Z",
    });
    const response = await call("PATCH", `/${id}`, { team: null, limits: null, policies: ["default"] });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      id,
      name: "ci",
      team: null,
      limits: null,
      policies: ["default"],
      models: ["gpt-*"],
      expires_at: "2027-01-01T00:00:00.000Z",
    });
    expect((await store.getKey(id))?.team).toBeUndefined();
  });

  it("refuses bad settings naming the field, and changes nothing", async () => {
    const { id } = await created({ name: "ci", team: "team-a" });
    expect(await refused(await call("PATCH", `/${id}`, { team: "bad team" }), 400, "INVALID_REQUEST")).toMatch(/team/);
    expect(await refused(await call("PATCH", `/${id}`, { name: null }), 400, "INVALID_REQUEST")).toMatch(/name/);
    expect(await refused(await call("PATCH", `/${id}`, { id: "key_x" }), 400, "INVALID_REQUEST")).toMatch(/id/);
    expect((await store.getKey(id))?.team).toBe("team-a");
  });

  it("answers 404 for an unknown id and 409 for a key of keys.toml", async () => {
    await refused(await call("PATCH", "/key_unknown", { team: "x" }), 404, "NOT_FOUND");
    const message = await refused(await call("PATCH", "/key_from_file", { team: "x" }), 409, "KEY_READ_ONLY");
    expect(message).toContain("keys.toml");
  });
});

describe("DELETE /promptgate/admin/keys/{id}", () => {
  it("revokes the key and answers it with revoked_at; a second revocation keeps the first time", async () => {
    const { id, secret } = await created();
    clock += 5000;
    const response = await call("DELETE", `/${id}`);
    expect(response.status).toBe(200);
    const revoked = await json(response);
    expect(revoked).toMatchObject({ id, revoked_at: "2026-12-07T12:00:05.000Z" });
    expect(JSON.stringify(revoked)).not.toContain(secret);
    clock += 5000;
    expect(await json(await call("DELETE", `/${id}`))).toMatchObject({ revoked_at: "2026-12-07T12:00:05.000Z" });
  });

  it("answers 404 for an unknown id and 409 for a key of keys.toml", async () => {
    await refused(await call("DELETE", "/key_unknown"), 404, "NOT_FOUND");
    await refused(await call("DELETE", "/key_from_file"), 409, "KEY_READ_ONLY");
  });
});

describe("POST /promptgate/admin/keys/{id}/rotate", () => {
  it("answers the id and a new secret; the old one opens the key for the grace only", async () => {
    const { id, secret } = await created();
    const response = await call("POST", `/${id}/rotate`, { grace_seconds: 60 });
    expect(response.status).toBe(200);
    const answer = await json(response);
    expect(Object.keys(answer)).toEqual(["id", "key"]);
    expect(answer.id).toBe(id);
    expect(answer.key).toMatch(/^pg_[0-9a-f]{64}$/);
    expect(answer.key).not.toBe(secret);
    expect((await store.keyOfSecret(sha256(String(answer.key)), start + 3_600_000))?.id).toBe(id);
    expect((await store.keyOfSecret(sha256(secret), start + 59_000))?.id).toBe(id);
    expect(await store.keyOfSecret(sha256(secret), start + 60_000)).toBeUndefined();
  });

  it("ends the old secret at once without a body or grace", async () => {
    const { id, secret } = await created();
    expect((await call("POST", `/${id}/rotate`)).status).toBe(200);
    expect(await store.keyOfSecret(sha256(secret), start)).toBeUndefined();
  });

  it.each([
    [{ grace_seconds: -1 }, /0 to 2592000/],
    [{ grace_seconds: 2_592_001 }, /0 to 2592000/],
    [{ grace_seconds: 1.5 }, /0 to 2592000/],
    [{ grace_seconds: "60" }, /0 to 2592000/],
    [{ grace: 60 }, /grace is not a member of a rotation/],
    [[60], /JSON object/],
  ])("refuses %j with 400", async (body, message) => {
    const { id, secret } = await created();
    expect(await refused(await call("POST", `/${id}/rotate`, body), 400, "INVALID_REQUEST")).toMatch(message);
    expect((await store.keyOfSecret(sha256(secret), start + 1000))?.id).toBe(id);
  });

  it("takes the longest grace, 30 days", async () => {
    const { id } = await created();
    expect((await call("POST", `/${id}/rotate`, { grace_seconds: 2_592_000 })).status).toBe(200);
  });

  it("answers 404 for an unknown id, 409 for a key of keys.toml and for a revoked key", async () => {
    await refused(await call("POST", "/key_unknown/rotate", {}), 404, "NOT_FOUND");
    await refused(await call("POST", "/key_from_file/rotate", {}), 409, "KEY_READ_ONLY");
    const { id } = await created();
    await call("DELETE", `/${id}`);
    await refused(await call("POST", `/${id}/rotate`, {}), 409, "KEY_REVOKED");
  });
});
