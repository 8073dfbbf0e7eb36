import { createHash } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import type { FileKey } from "../../src/keys/named-key.js";
import { createKeyRing, withStartUpKeyMode } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import type { Limits } from "../../src/policy/policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies, modelTable } from "../../src/runtime/workers/generated/assets.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import { inProcessUpstream } from "../support/in-process-upstream.js";
import { testSchemaValidators } from "../support/schema-validators.js";

// GET /promptgate/admin/keys/{id}/limits: the windows of a key's own limits, then those of each policy it may use,
// counted for the key, after calls made through the gateway (memory store, a fixed clock, an in-process upstream).

const adminKey = "admin-key-for-key-limit-tests";
const start = Date.parse("2026-12-07T12:00:30Z");
const fileSecret = "pg_file-key-secret-for-limit-tests";

/** The bundled policies' limits in these tests: `default` and `investigation.bounded` have some, the others none. */
const policyLimits: Record<string, Limits> = {
  default: { requests_per_minute: 3, chars_per_day: 1_000_000 },
  "investigation.bounded": { requests_per_hour: 5 },
};

const fileKey: FileKey = {
  secretSha256: createHash("sha256").update(fileSecret).digest("hex"),
  key: {
    id: "key_from_file",
    name: "file-key",
    team: "ops",
    policies: [],
    models: [],
    credentials: {},
    limits: { requests_per_minute: 4 },
    createdAt: 0,
    expiresAt: undefined,
    revokedAt: undefined,
    lastUsedAt: undefined,
    source: "file",
  },
};

let clock: number;
let app: ReturnType<typeof createApp>;
let records: CallRecord[];

beforeEach(async () => {
  clock = start;
  records = [];
  const upstream = inProcessUpstream();
  const store = memoryStore();
  const environment: Record<string, string> = {
    ...upstream.environment,
    PROMPTGATE_DB: "memory",
    PROMPTGATE_LOG: "silent",
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_KEY_MODE: "keys",
    OPENAI_API_KEY: "sk-server-held",
  };
  const configured = readConfig(environment);
  const policies = bundledPolicies.map((validated) => {
    const limits = policyLimits[validated.policy.name];
    return limits === undefined ? validated : { ...validated, policy: { ...validated.policy, limits } };
  });
  const deps: Deps = {
    config: await withStartUpKeyMode(configured, store, [fileKey]),
    policies: await identifyPolicies(policies),
    models: modelTableOf(modelTable, surfaces),
    surfaces,
    transport: fetchTransport(upstream.fetch),
    jsonScanner: new JsonScanner(),
    schemas: new Map(),
    schemaValidators: testSchemaValidators,
    store,
    keyRing: createKeyRing({ store, unnamedKeys: [], fileKeys: [fileKey] }),
    secretNamed: (variable) => environment[variable],
    recordCall: async (record) => {
      records.push(record);
    },
    newRef,
    now: () => new Date(clock),
  };
  app = createApp(deps);
});

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return app.request(`/promptgate/admin/keys${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function makeKey(settings: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const response = await admin("POST", "", settings);
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; key: string };
}

/** An OpenAI chat call presenting `secret`, under `policy` where given (else the key's default). */
async function chat(secret: string, policy?: string): Promise<Response> {
  const prefix = policy === undefined ? "" : `/policies/${policy}`;
  const response = await app.request(`${prefix}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "Count this call." }] }),
  });
  await response.arrayBuffer();
  return response;
}

interface Window {
  window: string;
  limit: number;
  used: number;
  reset_at: string | null;
  policy?: string;
}

async function limitsOf(id: string): Promise<Window[]> {
  const response = await admin("GET", `/${id}/limits`);
  expect(response.status).toBe(200);
  expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_/);
  const body = (await response.json()) as { windows: Window[] };
  expect(Object.keys(body)).toEqual(["windows"]);
  return body.windows;
}

/** The chars the provider check counted for the calls recorded under `policyName`. */
function charsUnder(policyName: string): number {
  return records
    .filter((record) => record.policy?.startsWith(`${policyName}@`) && record.decision === "sent")
    .reduce((sum, record) => sum + (record.provider_check?.conservative_total_chars ?? 0), 0);
}

describe("GET /promptgate/admin/keys/{id}/limits", () => {
  it("answers the key's own windows, then each of its policies' windows counted for the key", async () => {
    const key = await makeKey({
      name: "ci",
      team: "team-a",
      policies: ["default", "investigation.bounded", "case.interpretation"],
      limits: { requests_per_day: 10, concurrent: 2 },
    });
    expect((await chat(key.key)).status).toBe(200);
    clock += 5_000;
    expect((await chat(key.key)).status).toBe(200);
    expect((await chat(key.key, "investigation.bounded")).status).toBe(200);
    const chars = charsUnder("default");
    expect(chars).toBeGreaterThan(0);

    expect(await limitsOf(key.id)).toEqual([
      { window: "requests_per_day", limit: 10, used: 3, reset_at: "2026-12-08T00:00:00.000Z" },
      { window: "concurrent", limit: 2, used: 0, reset_at: null },
      {
        window: "requests_per_minute",
        limit: 3,
        used: 2,
        reset_at: "2026-12-07T12:01:00.000Z",
        policy: "default",
      },
      {
        window: "chars_per_day",
        limit: 1_000_000,
        used: chars,
        reset_at: "2026-12-08T00:00:00.000Z",
        policy: "default",
      },
      {
        window: "requests_per_hour",
        limit: 5,
        used: 1,
        reset_at: "2026-12-07T13:00:00.000Z",
        policy: "investigation.bounded",
      },
    ]);
  });

  it("counts a policy's windows per key: another key's calls under the policy are not this key's", async () => {
    const one = await makeKey({ name: "one", policies: ["default"] });
    const other = await makeKey({ name: "other", policies: ["default"] });
    expect((await chat(other.key)).status).toBe(200);
    const windows = await limitsOf(one.id);
    expect(windows.map(({ window, used, policy }) => ({ window, used, policy }))).toEqual([
      { window: "requests_per_minute", used: 0, policy: "default" },
      { window: "chars_per_day", used: 0, policy: "default" },
    ]);
  });

  it("reads the default policy's windows for a key that names no policy", async () => {
    const key = await makeKey({ name: "any-policy" });
    expect((await chat(key.key)).status).toBe(200);
    const windows = await limitsOf(key.id);
    expect(windows.map(({ window, used, policy }) => ({ window, used, policy }))).toEqual([
      { window: "requests_per_minute", used: 1, policy: "default" },
      { window: "chars_per_day", used: charsUnder("default"), policy: "default" },
    ]);
  });

  it("answers an empty list for a key without limits under policies without limits", async () => {
    const key = await makeKey({ name: "unlimited", policies: ["case.interpretation"] });
    expect(await limitsOf(key.id)).toEqual([]);
  });

  it("moves on to the next window: a minute later the minute's window is empty again", async () => {
    const key = await makeKey({ name: "ci", policies: ["default"], limits: { requests_per_minute: 5 } });
    expect((await chat(key.key)).status).toBe(200);
    clock += 60_000;
    const windows = await limitsOf(key.id);
    expect(windows[0]).toEqual({
      window: "requests_per_minute",
      limit: 5,
      used: 0,
      reset_at: "2026-12-07T12:02:00.000Z",
    });
    expect(windows.find((window) => window.window === "chars_per_day")?.used).toBe(charsUnder("default"));
  });

  it("counts no refused call: the window stays at its limit", async () => {
    const key = await makeKey({ name: "ci", policies: ["default"] });
    for (let call = 0; call < 3; call++) expect((await chat(key.key)).status).toBe(200);
    const refused = await chat(key.key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    const windows = await limitsOf(key.id);
    expect(windows[0]).toMatchObject({ window: "requests_per_minute", limit: 3, used: 3, policy: "default" });
  });

  it("reads a key of keys.toml the same way", async () => {
    expect((await chat(fileSecret)).status).toBe(200);
    expect(await limitsOf("key_from_file")).toEqual([
      { window: "requests_per_minute", limit: 4, used: 1, reset_at: "2026-12-07T12:01:00.000Z" },
      {
        window: "requests_per_minute",
        limit: 3,
        used: 1,
        reset_at: "2026-12-07T12:01:00.000Z",
        policy: "default",
      },
      {
        window: "chars_per_day",
        limit: 1_000_000,
        used: charsUnder("default"),
        reset_at: "2026-12-08T00:00:00.000Z",
        policy: "default",
      },
    ]);
  });

  it("answers 404 NOT_FOUND for an unknown id, as the other key routes do", async () => {
    const response = await admin("GET", "/key_000000000000000000000000/limits");
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe("NOT_FOUND");
    expect((await admin("GET", "/key_000000000000000000000000")).status).toBe(404);
  });

  it("is behind the admin key", async () => {
    const key = await makeKey({ name: "ci" });
    const response = await app.request(`/promptgate/admin/keys/${key.id}/limits`, {
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(response.status).toBe(401);
  });
});
