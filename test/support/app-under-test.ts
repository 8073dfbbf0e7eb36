import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies, modelTable } from "../../src/runtime/workers/generated/assets.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { surfaceNames } from "../../src/surfaces/surfaces.js";
import { type FetchFunction, fetchTransport } from "../../src/transport/fetch-transport.js";

/**
 * The gateway's app without a socket (driven through `app.request()`), on the bundled policies and model table, the memory store and
 * the simulated providers (or the providers `upstream` plays), with the records it keeps; runs on Node and in workerd
 * alike.
 */
export async function appUnderTest(
  environment: Record<string, string> = {},
  store: Store = memoryStore(),
  upstream: FetchFunction = createSimulatedProvider().fetch,
) {
  const records: CallRecord[] = [];
  const deps: Deps = {
    config: readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...environment }),
    policies: await identifyPolicies(bundledPolicies),
    models: modelTableOf(modelTable, surfaceNames),
    transport: fetchTransport(upstream),
    jsonScanner: new JsonScanner(),
    schemas: new Map(),
    store,
    recordCall: async (record) => void records.push(record),
    newRef,
    now: () => new Date(),
  };
  return { app: createApp(deps), records };
}
