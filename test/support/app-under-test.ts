import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import type { FileKey } from "../../src/keys/named-key.js";
import { createKeyRing, withStartUpKeyMode } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import type { WritablePolicyRegistry } from "../../src/policy/policy-registry.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies, modelTable } from "../../src/runtime/workers/generated/assets.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import { type FetchFunction, fetchTransport } from "../../src/transport/fetch-transport.js";
import { testSchemaValidators } from "./schema-validators.js";

/**
 * The gateway's app without a socket (driven through `app.request()`), on the bundled policies and model table, the memory store and
 * the simulated providers (or the providers `upstream` plays), with the records it keeps; runs on Node and in workerd
 * alike. With `keepRecords`, each record is also appended to the store before the answer leaves, as the Node runtime
 * does, so the admin routes list it; `policies` and `schemas` take the place of the bundled policies and of no named
 * schemas.
 */
export async function appUnderTest(
  environment: Record<string, string> = {},
  store: Store = memoryStore(),
  upstream: FetchFunction = createSimulatedProvider().fetch,
  options: {
    keepRecords?: boolean;
    policies?: WritablePolicyRegistry;
    schemas?: ReadonlyMap<string, unknown>;
    /** The keys of a `keys.toml`. */
    fileKeys?: readonly FileKey[];
  } = {},
) {
  const records: CallRecord[] = [];
  const fileKeys = options.fileKeys ?? [];
  const configured = readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...environment });
  const deps: Deps = {
    config: await withStartUpKeyMode(configured, store, fileKeys),
    policies: options.policies ?? (await identifyPolicies(bundledPolicies)),
    models: modelTableOf(modelTable, surfaces),
    surfaces,
    transport: fetchTransport(upstream),
    jsonScanner: new JsonScanner(),
    schemas: options.schemas ?? new Map(),
    schemaValidators: testSchemaValidators,
    store,
    keyRing: createKeyRing({ store, unnamedKeys: configured.gatewayKeys, fileKeys }),
    secretNamed: (variable) => environment[variable],
    recordCall: async (record) => {
      records.push(record);
      if (options.keepRecords) await store.appendCall(record);
    },
    newRef,
    now: () => new Date(),
  };
  return { app: createApp(deps), records };
}

/** The app `appUnderTest` gives. */
export type GatewayApp = Awaited<ReturnType<typeof appUnderTest>>["app"];
