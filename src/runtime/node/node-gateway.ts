import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ServerType, serve } from "@hono/node-server";
import type { DestinationStream } from "pino";
import { createApp } from "../../app.js";
import { type Config, ConfigError, readConfig } from "../../config.js";
import type { Deps } from "../../deps.js";
import { newRef } from "../../errors/ref.js";
import { loadPolicies, type PolicyFile } from "../../policy/load-policies.js";
import { createSimulatedProvider, simulatedOrigin } from "../../simulated/simulated-provider.js";
import { memoryStore } from "../../store/memory-store.js";
import type { Store } from "../../store/store.js";
import { syncPolicyVersions } from "../../store/sync-policy-versions.js";
import { fetchTransport, routeByOrigin } from "../../transport/fetch-transport.js";
import { callLogger } from "./call-logger.js";
import { sqliteStore } from "./sqlite-store.js";
import { undiciTransport } from "./undici-transport.js";

type Environment = Readonly<Record<string, string | undefined>>;

/** Reads every `*.toml` of the policy folder. */
export async function readPolicyFiles(directory: string): Promise<PolicyFile[]> {
  const names = (await readdir(directory)).filter((name) => name.endsWith(".toml")).sort();
  return Promise.all(
    names.map(async (name) => ({ path: join(directory, name), text: await readFile(join(directory, name), "utf8") })),
  );
}

/** Reads every `*.json` of the schema folder as a named schema (file name without `.json`). */
export async function readNamedSchemas(directory: string): Promise<Map<string, unknown>> {
  const schemas = new Map<string, unknown>();
  for (const name of (await readdir(directory)).filter((file) => file.endsWith(".json")).sort()) {
    const path = join(directory, name);
    try {
      schemas.set(name.slice(0, -".json".length), JSON.parse(await readFile(path, "utf8")));
    } catch {
      throw new ConfigError(`${path} is not valid JSON.`);
    }
  }
  return schemas;
}

/** The store `PROMPTGATE_DB` names: `memory`, or a SQLite file (a newer database stops start-up cleanly). */
function openStore(db: string): Store {
  if (db === "memory") return memoryStore();
  try {
    return sqliteStore(db);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : `The database ${db} cannot be opened.`);
  }
}

/** What a Node gateway takes besides its environment. */
export interface NodeGatewayOptions {
  /** Where the call log lines go instead of stdout (tests capture them). */
  logDestination?: DestinationStream;
}

/**
 * The gateway's dependencies on Node: configuration and policies from disk, undici, the simulated
 * provider, and the call log at `PROMPTGATE_LOG`'s level.
 */
export async function createNodeDeps(environment: Environment, options: NodeGatewayOptions = {}): Promise<Deps> {
  const config = readConfig(environment);
  const policySchema = JSON.parse(await readFile(join(config.schemasDir, "policy.schema.json"), "utf8"));
  const policies = await loadPolicies(await readPolicyFiles(config.policiesDir), policySchema);
  try {
    policies.resolve(config.defaultPolicy);
  } catch {
    throw new ConfigError(`PROMPTGATE_DEFAULT_POLICY names no policy in ${config.policiesDir}.`);
  }
  const simulated = createSimulatedProvider();
  const transport = routeByOrigin(simulatedOrigin, fetchTransport(simulated.fetch), undiciTransport());
  const store = openStore(config.db);
  await syncPolicyVersions(store, policies);
  return {
    config,
    policies,
    transport,
    schemas: await readNamedSchemas(config.schemasDir),
    store,
    recordCall: (record) =>
      store.appendCall(record).catch(() => console.error("promptgate: a call record could not be stored.")),
    log: callLogger(config.logLevel, options.logDestination),
    newRef,
    now: () => new Date(),
  };
}

/** A running gateway on Node. */
export interface NodeGateway {
  url: string;
  config: Config;
  close(): Promise<void>;
}

/** Starts the gateway on `HOST`:`PORT` (port 0 picks a free one) and resolves once it listens. */
export async function startNodeGateway(
  environment: Environment,
  options: NodeGatewayOptions = {},
): Promise<NodeGateway> {
  const deps = await createNodeDeps(environment, options);
  const app = createApp(deps);
  return new Promise((resolve) => {
    const server: ServerType = serve(
      { fetch: app.fetch, hostname: deps.config.host, port: deps.config.port },
      (info) => {
        resolve({
          url: `http://${deps.config.host}:${info.port}`,
          config: deps.config,
          close: async () => {
            await new Promise<void>((done) => {
              server.close(() => done());
              if ("closeAllConnections" in server) server.closeAllConnections();
            });
            await deps.store.close();
          },
        });
      },
    );
  });
}
