import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, expect } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps, JobHost } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { createKeyRing } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import type { Policy } from "../../src/policy/policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { openStore } from "../../src/runtime/node/open-store.js";
import { policies as bundledPolicies } from "../../src/runtime/workers/generated/assets.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { sweepCutoffs } from "../../src/store/sweep-cutoffs.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import { freshDatabase, postgresUrl, testPostgresStore } from "./postgres.js";
import { testSchemaValidators } from "./schema-validators.js";

// The gateway's app with the simulated providers behind a recording transport, a fake clock and a chosen store,
// driven through the openai SDK: what the session tests share.

export const hour = 60 * 60 * 1000;

/** A policy of the bundled set (case.interpretation), under another name, with tables of its own. */
function testPolicy(name: string, tables: Partial<Pick<Policy, "session" | "jobs" | "upstream_errors">>) {
  const base = bundledPolicies.find((entry) => entry.policy.name === "case.interpretation");
  if (base === undefined) throw new Error("case.interpretation is not bundled");
  return { source: `${name}.toml`, policy: { ...base.policy, name, ...tables } as Policy };
}

export interface Sent {
  path: string;
  body: Record<string, unknown>;
  at: number;
}

export interface Gateway {
  client(options?: { key?: string; policy?: string; label?: string }): OpenAI;
  /** What reached the simulated providers, in order. */
  sent: Sent[];
  records: CallRecord[];
  clock: { now: number };
  /** Holds every upstream request until `release` is called (for serialized turns). */
  gate(): () => void;
  app: ReturnType<typeof createApp>;
  /** The gateway's answer jobs running in this process. */
  jobs: JobHost;
  store: Store;
  /** Sweeps the store at the fake clock's time, as a node does every ten minutes. */
  sweep(): Promise<void>;
  /** Replaces the model table (as a reload or deploy would), from a table's TOML text. */
  useModels(text: string): void;
}

/** The stores the session and job tests run on: each gets a new, empty one per gateway. */
export const stores: [string, () => Promise<Store>][] = [
  ["memory", async () => memoryStore()],
  [
    "SQLite",
    () =>
      openStore(
        {
          db: join(mkdtempSync(join(tmpdir(), "promptgate-sessions-")), "state.db"),
          explicit: true,
          workingDirectory: process.cwd(),
        },
        { poolSize: 1, statementTimeoutMs: 1_000 },
      ),
  ],
  ...(postgresUrl === ""
    ? []
    : [
        ["PostgreSQL", async (): Promise<Store> => testPostgresStore(await freshDatabase())] as [
          string,
          () => Promise<Store>,
        ],
      ]),
];

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

export async function gatewayOn(
  makeStore: () => Store | Promise<Store>,
  environment: Record<string, string> = {},
): Promise<Gateway> {
  const clock = { now: Date.parse("2026-12-01T12:00:00Z") };
  const simulated = createSimulatedProvider({ clock: { now: () => new Date(clock.now) } } as never);
  const sent: Sent[] = [];
  let held: Promise<void> | undefined;
  const transport = fetchTransport(async (request: Request) => {
    const body = request.method === "POST" ? ((await request.clone().json()) as Record<string, unknown>) : {};
    sent.push({ path: new URL(request.url).pathname, body, at: Date.now() });
    // A provider failing with text of its own, which only a passthrough policy may relay.
    if (body.input === "provider-failure") {
      return Response.json(
        { error: { message: "raw provider text sk-live-0123", type: "server_error" } },
        { status: 500 },
      );
    }
    if (held !== undefined) {
      // A held request still ends when its caller aborts it, as a real provider call does.
      const aborted = new Promise((resolve) => {
        if (request.signal.aborted) resolve(undefined);
        request.signal.addEventListener("abort", resolve, { once: true });
      });
      await Promise.race([held, aborted]);
      if (request.signal.aborted) throw new DOMException("The operation was aborted.", "AbortError");
    }
    return simulated.fetch(request);
  });
  const store = await makeStore();
  open.push(store);
  const records: CallRecord[] = [];
  const policies = await identifyPolicies([
    ...bundledPolicies,
    testPolicy("session.capped", { session: { max_start_tokens: 100, max_total_tokens: 150 } as never }),
    testPolicy("session.short", { session: { idle_hours: 1, max_days: 1, queue_seconds: 1 } as never }),
    testPolicy("jobs.one", { jobs: { max_running: 1, queue_seconds: 300 } as never }),
    testPolicy("errors.passthrough", { upstream_errors: { text: "passthrough" } }),
  ]);
  const config = readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...environment });
  const deps: Deps = {
    config,
    policies,
    models: modelTableOf(undefined, surfaces),
    surfaces,
    transport,
    jsonScanner: new JsonScanner(),
    schemas: new Map(),
    schemaValidators: testSchemaValidators,
    store,
    keyRing: createKeyRing({ store, unnamedKeys: config.gatewayKeys, fileKeys: [] }),
    secretNamed: (variable) => environment[variable],
    recordCall: async (record) => void records.push(record),
    newRef,
    now: () => new Date(clock.now),
    jobs: { local: new Map(), keep: () => {} },
  };
  const app = createApp(deps);
  return {
    app,
    jobs: deps.jobs as JobHost,
    store,
    sweep: () => store.sweep(sweepCutoffs(policies.list(), clock.now)),
    useModels(text) {
      deps.models = modelTableOf({ path: "models.toml", text }, surfaces);
    },
    sent,
    records,
    clock,
    gate() {
      let release = () => {};
      held = new Promise((resolve) => {
        release = () => {
          held = undefined;
          resolve();
        };
      });
      return release;
    },
    client({ key = "sk-alice", policy, label } = {}) {
      return new OpenAI({
        apiKey: key,
        baseURL: `http://gateway.test${policy === undefined ? "" : `/policies/${policy}`}/openai/v1`,
        maxRetries: 0,
        fetch: async (url, init) => app.fetch(new Request(url, init)),
        ...(label === undefined ? {} : { defaultHeaders: { "x-promptgate-call": label } }),
      });
    },
  };
}

/** The error body a rejected call got, as the SDK reads it. */
export async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const apiError = error as InstanceType<typeof OpenAI.APIError>;
  const body = apiError.error as { promptgate: { code: string } };
  return { status: apiError.status, code: apiError.code, param: apiError.param, promptgate: body.promptgate.code };
}
