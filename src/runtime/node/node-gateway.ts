import { isUtf8 } from "node:buffer";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import type { Server } from "node:http";
import { join } from "node:path";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import type { DestinationStream } from "pino";
import { createApp, metricsApp } from "../../app.js";
import { type Config, ConfigError, readConfig } from "../../config.js";
import { unknownVariableWarnings } from "../../config-variables.js";
import type { Deps } from "../../deps.js";
import { newRef } from "../../errors/ref.js";
import { stopJobs } from "../../jobs/answer-jobs.js";
import { JsonScanner } from "../../json/json-scanner.js";
import { keyFileName } from "../../keys/key-file.js";
import { createKeyRing, withStartUpKeyMode } from "../../pipeline/key-ring.js";
import { configSecrets } from "../../pipeline/upstream-call.js";
import { logInternalError } from "../../pipeline/write-log.js";
import { loadPolicies, type PolicyFile, PolicyFileError } from "../../policy/load-policies.js";
import { currentPolicyNames } from "../../policy/policy-registry.js";
import type { PolicyReload } from "../../policy/reload-policies.js";
import { reloadablePolicies } from "../../policy/reloadable-policies.js";
import { type ModelTable, modelTableFile, modelTableOf } from "../../routing/model-table.js";
import { ajvSchemaCompiling } from "../../schema/compile-schema.js";
import { createSchemaValidators } from "../../schema/schema-validators.js";
import { createSimulatedProvider, simulatedOrigin } from "../../simulated/simulated-provider.js";
import { sweepCutoffs } from "../../store/sweep-cutoffs.js";
import { syncPolicyVersions } from "../../store/sync-policy-versions.js";
import { surfaces } from "../../surfaces/surfaces.js";
import { fetchTransport, routeByOrigin } from "../../transport/fetch-transport.js";
import { callLogger, nodeLogger } from "./call-logger.js";
import { clientEnv } from "./client-env.js";
import { warnAboutConnections } from "./connection-warnings.js";
import { readKeyFile } from "./key-file.js";
import { listen } from "./listen.js";
import { openRelayRefusal } from "./open-relay.js";
import { databaseRefusal, isSqliteFailure, openStore } from "./open-store.js";
import { tracingFromEnvironment } from "./otel-tracing.js";
import { packageVersion, policySchemaPath } from "./package-paths.js";
import { type PendingWork, pendingWork } from "./pending-work.js";
import { nodePolicyReload, warnOfMissingSchemas } from "./policy-reload.js";
import { prometheusMetrics } from "./prometheus-metrics.js";
import { workerSchemaCompiler } from "./schema-compiler.js";
import { serverDrain } from "./server-drain.js";
import { defaultMaxConnections, openFileLimit, serverOptions } from "./server-limits.js";
import { startUpRefusal } from "./start-up-refusals.js";
import { atTurnEnd } from "./turn-end.js";
import { undiciTransport } from "./undici-transport.js";

type Environment = Readonly<Record<string, string | undefined>>;

/** Reads every `*.toml` of the policy folder but the model table and the key file. */
export async function readPolicyFiles(directory: string): Promise<PolicyFile[]> {
  const names = (await readdir(directory))
    .filter((name) => name.endsWith(".toml") && name !== modelTableFile && name !== keyFileName)
    .sort();
  return Promise.all(
    names.map(async (name) => ({ path: join(directory, name), text: await readFile(join(directory, name), "utf8") })),
  );
}

/**
 * The open-relay refusal (`openRelayRefusal`) a start would meet, read before anything starts (a cluster's primary
 * asks before it forks): named keys in the store or a `keys.toml` in the policy folder turn gateway-key mode on.
 */
export async function startUpRelayRefusal(environment: Environment): Promise<ConfigError | undefined> {
  const config = readConfig(environment);
  const refusal = openRelayRefusal(config);
  if (refusal === undefined || existsSync(join(config.policiesDir, keyFileName))) return undefined;
  const store = await openStore(startUpRefusal(environment).database(config.db), {
    poolSize: 1,
    statementTimeoutMs: config.dbStatementTimeoutMs,
  });
  try {
    return (await store.listKeys()).length > 0 ? undefined : refusal;
  } finally {
    await store.close();
  }
}

/** The model table of the policy folder (`models.toml`), or the shipped default where the folder has none. */
export async function readModelTable(directory: string): Promise<ModelTable> {
  const path = join(directory, modelTableFile);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return modelTableOf(undefined, surfaces);
  }
  return modelTableOf({ path, text }, surfaces);
}

/** Reads every `*.json` of the schema folder as a named schema (file name without `.json`). */
export async function readNamedSchemas(directory: string): Promise<Map<string, unknown>> {
  const schemas = new Map<string, unknown>();
  for (const name of (await readdir(directory)).filter((file) => file.endsWith(".json")).sort()) {
    const path = join(directory, name);
    try {
      schemas.set(name.slice(0, -".json".length), JSON.parse(await readFile(path, "utf8")));
    } catch {
      throw new ConfigError(`${path} is not valid JSON: correct it, or move it out of ${directory}.`);
    }
  }
  return schemas;
}

/** What a Node gateway takes besides its environment. */
export interface NodeGatewayOptions {
  /** Where the call log lines go instead of stdout (tests capture them). */
  logDestination?: DestinationStream;
  /** Where warnings about connections go instead of stderr, one line each. */
  warn?: (line: string) => void;
}

/**
 * The gateway's dependencies on Node: configuration and policies from disk, undici, the simulated
 * provider, and the call log at `PROMPTGATE_LOG`'s level.
 */
export function createNodeDeps(environment: Environment, options: NodeGatewayOptions = {}): Promise<Deps> {
  return nodeDeps(environment, options, pendingWork());
}

/** The Node dependencies: policies are read from a folder, so they can be reloaded. */
type NodeDeps = Deps & {
  reloadPolicies: NonNullable<Deps["reloadPolicies"]>;
  /** Exports the spans still waiting: a shutdown waits for it after the last call ended. */
  shutdownTracing?: () => Promise<void>;
};

/** The Node dependencies, with every call record written tracked in `work`. */
async function nodeDeps(environment: Environment, options: NodeGatewayOptions, work: PendingWork): Promise<NodeDeps> {
  const configured = readConfig(environment);
  const policySchema = JSON.parse(await readFile(policySchemaPath, "utf8"));
  const refusal = startUpRefusal(environment);
  const policiesDir = configured.policiesDir;
  const policyFiles = await readPolicyFiles(policiesDir).catch(refusal.folder("policies", policiesDir));
  const policies = await loadPolicies(policyFiles, policySchema);
  const models = await readModelTable(policiesDir);
  try {
    policies.resolve(configured.defaultPolicy);
  } catch {
    throw refusal.defaultPolicy(configured, policies.list());
  }
  // A key file that is not valid refuses the start as a policy file does, naming the file, field and reason.
  const fileKeys = await readKeyFile(policiesDir, currentPolicyNames(policies), environment).catch((error: unknown) => {
    if (PolicyFileError.isInstance(error)) throw error;
    return refusal.folder("policies", policiesDir)(error);
  });
  // Response schemas compile in a worker thread, so that a large new one does not stall other calls.
  const schemaValidators = createSchemaValidators({
    compiling: ajvSchemaCompiling(),
    compiler: workerSchemaCompiler(),
  });
  const simulated = createSimulatedProvider();
  const transport = routeByOrigin(simulatedOrigin, fetchTransport(simulated.fetch), undiciTransport());
  const schemas = await readNamedSchemas(configured.schemasDir).catch(refusal.folder("schemas", configured.schemasDir));
  // Held so that a reload (SIGHUP, the admin route) swaps the registry every call reads through.
  const held = reloadablePolicies(policies);
  const database = refusal.database(configured.db);
  const store = await openStore(database, {
    poolSize: configured.dbPoolSize,
    statementTimeoutMs: configured.dbStatementTimeoutMs,
  });
  let config: Config;
  try {
    await syncPolicyVersions(store, policies);
    config = await withStartUpKeyMode(configured, store, fileKeys);
  } catch (error) {
    await store.close();
    // A database opened but refusing its first write: read-only, full, locked by another process.
    throw isSqliteFailure(error) ? databaseRefusal(database, error) : error;
  }
  const logger = nodeLogger(config, options.logDestination);
  for (const warning of unknownVariableWarnings(environment)) logger.warn({ event: "unknown_variable" }, warning);
  const schemaNames = new Set(schemas.keys());
  warnOfMissingSchemas(logger, held.current(), schemaNames);
  const log = callLogger(logger);
  const unstored = (ref: string, error: unknown) =>
    logInternalError({ log }, ref, error, "record", configSecrets(config));
  const keyRing = createKeyRing({ store, unnamedKeys: config.gatewayKeys, fileKeys });
  const reloadPolicies = nodePolicyReload({
    config,
    policies: held,
    policySchema,
    schemaNames,
    readFiles: () => readPolicyFiles(config.policiesDir),
    keep: (registry) => syncPolicyVersions(store, registry),
    alongside: async (policyNames) => {
      const keys = await readKeyFile(config.policiesDir, policyNames, environment);
      return () => keyRing.replaceFileKeys(keys);
    },
    logger,
  });
  const deps: NodeDeps = {
    config,
    policies: held,
    reloadPolicies,
    models,
    surfaces,
    transport,
    // A body's UTF-8 checked natively (simdutf), so that the scanner reads text past ASCII four bytes at a time.
    jsonScanner: new JsonScanner(isUtf8),
    schemas,
    schemaValidators,
    store,
    keyRing,
    secretNamed: (variable) => environment[variable],
    hmacSha256: (key, text) => createHmac("sha256", key).update(text).digest("hex"),
    recordCall: (record) => work.track(store.appendCall(record).catch((error) => unstored(record.ref, error))),
    log,
    afterAnswer: atTurnEnd,
    newRef,
    now: () => new Date(),
    // A shutdown waits for every job's end: it aborts the running ones first (see `shutdown`).
    jobs: { local: new Map(), keep: (task) => void work.track(task) },
  };
  // The model table's names label the model metrics; a deploy that replaces the table is followed.
  if (config.metrics) deps.metrics = prometheusMetrics({ models: () => deps.models, public: config.metricsPublic });
  const tracing = tracingFromEnvironment(environment, packageVersion());
  if (tracing !== undefined) {
    deps.tracing = tracing;
    deps.shutdownTracing = () => tracing.shutdown();
  }
  return deps;
}

/** `GET /metrics` on a port of its own (`PROMPTGATE_METRICS_PORT`), e.g. one that only the scraper can reach. */
async function serveMetrics(deps: Deps, port: number): Promise<Server> {
  const server = createAdaptorServer({ hostname: deps.config.host, fetch: metricsApp(deps).fetch }) as Server;
  await listen(server, deps.config.host, port);
  return server;
}

/** How often a node sweeps expired rows out of the store. */
const sweepIntervalMs = 10 * 60 * 1000;

/**
 * Sweeps the store every ten minutes, without keeping the process alive for it; a sweep runs to its end before a
 * shutdown closes the store, and a failed one is logged and tried again next time.
 */
function scheduleSweeps(deps: Deps, work: PendingWork): NodeJS.Timeout {
  const timer = setInterval(() => {
    const cutoffs = sweepCutoffs(deps.policies.list(), deps.now().getTime());
    const swept = deps.store.sweep(cutoffs).catch((error) => logInternalError(deps, newRef(), error, "sweep", []));
    work.track(swept);
  }, sweepIntervalMs);
  timer.unref();
  return timer;
}

/** A running gateway on Node. */
export interface NodeGateway {
  url: string;
  config: Config;
  /** The policy versions it serves (its start-up line lists the current ones). */
  policies: Deps["policies"];
  /** Re-reads the policy folder and switches to it when valid, else keeps the running set; logs either way. */
  reloadPolicies(trigger: string): Promise<PolicyReload>;
  /**
   * Stops accepting connections and marks `/readyz` draining, lets the requests in flight finish
   * for up to `drainMs` (default `PROMPTGATE_DRAIN_SECONDS`), cuts off the rest, then commits
   * every record and closes the store. A later call may shorten the drain; all get one outcome.
   */
  shutdown(drainMs?: number): Promise<Shutdown>;
  /** Stops at once: a shutdown without a drain. */
  close(): Promise<void>;
}

/** How a shutdown went: the requests it let finish or cut off, and how long it took. */
export interface Shutdown {
  /** Requests in flight when it began, or arriving on open connections during the drain. */
  requests: number;
  /** Of those, the ones still unanswered when the drain ran out. */
  cutOff: number;
  elapsedMs: number;
}

/** Starts the gateway on `HOST`:`PORT` (port 0 picks a free one) and resolves once it listens. */
export async function startNodeGateway(
  environment: Environment,
  options: NodeGatewayOptions = {},
): Promise<NodeGateway> {
  const work = pendingWork();
  const deps = await nodeDeps(environment, options, work);
  const { config } = deps;
  // After the store is open: named keys there or in keys.toml turn gateway-key mode on.
  const relay = openRelayRefusal(config);
  if (relay !== undefined) {
    await deps.store.close();
    throw relay;
  }
  const app = createApp(deps, { draining: () => drain.draining, metricsRoute: config.metricsPort === undefined });
  // An http.Server: no http2 or https `createServer` is passed.
  const server = createAdaptorServer({
    hostname: config.host,
    serverOptions: serverOptions(config.server),
    fetch: (request, env) => {
      const answer = app.fetch(request, clientEnv(request, env as HttpBindings));
      return answer instanceof Promise ? work.track(answer) : answer;
    },
  }) as Server;
  server.maxConnections = config.server.maxConnections ?? defaultMaxConnections(openFileLimit());
  const drain = serverDrain(server);
  let port: number;
  try {
    ({ port } = await listen(server, config.host, config.port));
  } catch (error) {
    await deps.store.close();
    throw error;
  }
  warnAboutConnections(server, server.maxConnections, options.warn ?? ((line) => process.stderr.write(`${line}\n`)));
  const metricsServer = config.metricsPort === undefined ? undefined : await serveMetrics(deps, config.metricsPort);
  const sweeps = scheduleSweeps(deps, work);

  let stopped: Promise<Shutdown> | undefined;
  const shutdown = (drainMs = config.server.drainMs): Promise<Shutdown> => {
    const drained = drain.drain(drainMs);
    stopped ??= (async () => {
      const started = Date.now();
      const { requests, cutOff } = await drained;
      clearInterval(sweeps);
      metricsServer?.close();
      // A running answer job ends as failed, never left running for the next process to find.
      if (deps.jobs !== undefined) stopJobs(deps.jobs);
      await work.settled();
      await deps.shutdownTracing?.().catch(() => undefined);
      await deps.store.close();
      return { requests, cutOff, elapsedMs: Date.now() - started };
    })();
    return stopped;
  };
  return {
    url: `http://${config.host}:${port}`,
    config,
    policies: deps.policies,
    reloadPolicies: deps.reloadPolicies,
    shutdown,
    close: async () => {
      await shutdown(0);
    },
  };
}
