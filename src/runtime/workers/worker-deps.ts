import { type Config, ConfigError, readConfig } from "../../config.js";
import type { Deps } from "../../deps.js";
import { newRef } from "../../errors/ref.js";
import { JsonScanner } from "../../json/json-scanner.js";
import { parseKeyFile } from "../../keys/key-file.js";
import { createKeyRing, withStartUpKeyMode } from "../../pipeline/key-ring.js";
import { identifyPolicies } from "../../policy/identify-policy.js";
import { currentPolicyNames } from "../../policy/policy-registry.js";
import { modelTableOf } from "../../routing/model-table.js";
import { createSchemaValidators } from "../../schema/schema-validators.js";
import { createSimulatedProvider, simulatedOrigin } from "../../simulated/simulated-provider.js";
import { syncPolicyVersions } from "../../store/sync-policy-versions.js";
import { surfaces } from "../../surfaces/surfaces.js";
import { fetchTransport, routeByOrigin } from "../../transport/fetch-transport.js";
import { bundledNamedSchemas, bundledValidators } from "./bundled-schemas.js";
import { consoleCallLog } from "./console-call-log.js";
import { d1Store } from "./d1-store.js";
import { policies as bundledPolicies, keyFile, migrations, modelTable } from "./generated/assets.js";

/**
 * The bound of an isolate's validator caches: an isolate has 128 MB in all. Interpreted validators hold ~24 bytes per
 * schema character (interpretedBytesPerSchemaChar), so this keeps ten schemas at the default size cap, hundreds of
 * usual ones.
 */
export const workerValidatorBytes = 24 * 2 ** 20;

/** What one isolate shares between its requests: everything of `Deps` but the per-request call recorder. */
export type IsolateDeps = Omit<Deps, "recordCall">;

/**
 * The worker's `env`: the bindings and `[vars]` of wrangler.toml (`Env`, from `wrangler types`) and what may be set
 * on top: the secrets (`wrangler secret put`, or .dev.vars locally) and the variables left out of `[vars]`: the
 * admin and gateway keys, CORS origins, and each provider's key and upstream (the variables its surface names in
 * `upstream`), read by `readConfig` like every string member.
 */
export type WorkerEnv = Env & { readonly [variable: string]: unknown };

/** The string members of `env`: the `[vars]` and the secrets (provider keys, admin key), for `readConfig`. */
function variablesOf(env: object): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/**
 * The gateway's dependencies on Workers, built once per isolate: configuration from `env`, the policies validated
 * at build time, named schemas with precompiled validators and client schemas interpreted (Workers forbid code
 * generation during a request, so Ajv cannot compile there), D1 for state,
 * and `fetch` as transport with the simulated provider in-process, routed as on Node.
 */
export async function createIsolateDeps(env: WorkerEnv): Promise<IsolateDeps> {
  // Anyone may reach a worker: a pass-through call uses a server-held key only with PROMPTGATE_OPEN_RELAY=true.
  const config: Config = readConfig(variablesOf(env), { beyondLoopback: true });
  const policies = await identifyPolicies(bundledPolicies);
  try {
    policies.resolve(config.defaultPolicy);
  } catch {
    throw new ConfigError("PROMPTGATE_DEFAULT_POLICY names no bundled policy.");
  }
  const simulated = createSimulatedProvider();
  // The arrow calls `fetch` as the global function; Workers refuse it as a method of another object.
  const transport = routeByOrigin(
    simulatedOrigin,
    fetchTransport(simulated.fetch),
    fetchTransport((request) => fetch(request)),
  );
  const store = d1Store(env.DB, migrations);
  await syncPolicyVersions(store, policies);
  const variables = variablesOf(env);
  const fileKeys =
    keyFile === undefined
      ? []
      : await parseKeyFile(keyFile.path, keyFile.text, {
          policyNames: currentPolicyNames(policies),
          providerNames: surfaces.map((surface) => surface.name),
          credentialSet: (variable) => (variables[variable] ?? "") !== "",
        });
  return {
    config: await withStartUpKeyMode(config, store, fileKeys),
    policies,
    models: modelTableOf(modelTable, surfaces),
    surfaces,
    transport,
    jsonScanner: new JsonScanner(),
    schemas: bundledNamedSchemas(),
    schemaValidators: createSchemaValidators({ precompiled: bundledValidators(), maxBytes: workerValidatorBytes }),
    store,
    keyRing: createKeyRing({ store, unnamedKeys: config.gatewayKeys, fileKeys }),
    secretNamed: (variable) => variables[variable],
    newRef,
    now: () => new Date(),
    log: consoleCallLog(config.logLevel),
  };
}
