import type { KnownEnvironment, VariableName } from "./config-variables.js";
import { redactKeys } from "./errors/redact-keys.js";
import type { UpstreamTimeouts } from "./policy/policy.js";
import { simulatedOrigin } from "./simulated/simulated-provider.js";
import type { Surface } from "./surfaces/surface.js";
import { surfaces } from "./surfaces/surfaces.js";

/** Where one surface's calls go, and the server-held key for it. */
export interface UpstreamConfig {
  /** Base URL the route path below the surface's mount is appended to. */
  baseUrl: string;
  /** Whether this is the embedded simulated provider. */
  simulated: boolean;
  /** How call records name the provider: `simulated`, or the upstream's origin. */
  label: string;
  /** A server-held provider key: used when the client sends none, and always in gateway-key mode. */
  serverKey: string | undefined;
  /**
   * Set when the provider has no upstream to call (none configured, and no public one): the variable to set.
   * Every call for it is 403 `account_selection` naming that variable.
   */
  unavailable?: string;
  /**
   * Set when the provider is not configured but others are: its calls go to its public upstream, and only with the
   * client's own credential (a call that would need its server-held key is 403 naming the key's variable).
   */
  unconfigured?: boolean;
}

/** The gateway's configuration, read from the environment (contract section 1). */
export interface Config {
  host: string;
  port: number;
  policiesDir: string;
  schemasDir: string;
  defaultPolicy: string;
  /** Each provider's upstream, by the name of its surface (every registered surface has one). */
  upstreams: Readonly<Record<string, UpstreamConfig>>;
  adminKey: string | undefined;
  /** Unnamed gateway keys (`PROMPTGATE_KEYS`), which may use every policy and model. */
  gatewayKeys: readonly string[];
  /**
   * Whether clients must present a gateway key (unnamed or named) instead of a provider key: when `PROMPTGATE_KEYS` is
   * set or `PROMPTGATE_KEY_MODE=keys`; the runtime turns it on too when its store or `keys.toml` holds a named key at
   * start-up. It stays as it is until restart: revoking the last key never turns a gateway into pass-through.
   */
  gatewayKeyMode: boolean;
  /** `PROMPTGATE_OPEN_RELAY=true`: callers beyond loopback may use the server-held keys in pass-through mode. */
  openRelay: boolean;
  /**
   * Whether a pass-through call may be sent with a server-held key. On Node always: start-up refuses to listen beyond
   * loopback unless `openRelay`. Where there is no loopback (Workers, `readConfig`'s `beyondLoopback`), `openRelay`.
   */
  passThroughServerKeys: boolean;
  /** Origins whose browser pages may call the gateway (`PROMPTGATE_CORS_ORIGINS`, `*` for any); undefined: no CORS. */
  corsOrigins: readonly string[] | undefined;
  db: string;
  /** A PostgreSQL store's connections at most (`PROMPTGATE_DB_POOL`). */
  dbPoolSize: number;
  /** Milliseconds a PostgreSQL statement may run before the server cancels it (`PROMPTGATE_DB_STATEMENT_TIMEOUT_MS`). */
  dbStatementTimeoutMs: number;
  maxBodyBytes: number;
  /** The level of the per-call log line (`PROMPTGATE_LOG`): a pino level name, or `silent`. */
  logLevel: LogLevel;
  /** How the Node log writes its lines (`PROMPTGATE_LOG_FORMAT`); undefined: pretty on a terminal, else JSON. */
  logFormat: LogFormat | undefined;
  /** How the Node server guards its connections and shuts down; Workers have no server of their own and ignore it. */
  server: ServerConfig;
  /** Whether the Node gateway keeps Prometheus metrics at all (`PROMPTGATE_METRICS`, default true). */
  metrics: boolean;
  /** Whether `GET /metrics` answers without the admin key (`PROMPTGATE_METRICS_PUBLIC=true`). */
  metricsPublic: boolean;
  /** A port of its own for `GET /metrics` (`PROMPTGATE_METRICS_PORT`); undefined: the gateway's port. */
  metricsPort: number | undefined;
  /** Node processes serving one port (`PROMPTGATE_WORKERS`): a number, or `auto` for one per core; Workers ignore it. */
  workers: number | "auto";
  /** How long a provider call may stall at each stage (`PROMPTGATE_UPSTREAM_*_SECONDS`); a policy may override each. */
  upstreamTimeouts: UpstreamTimeouts;
}

/** The Node server's connection limits and shutdown drain, in milliseconds. */
export interface ServerConfig {
  /** From a connection's opening (or a further request's first byte) to complete headers (`PROMPTGATE_HEADERS_TIMEOUT_SECONDS`). */
  headersTimeoutMs: number;
  /** From a request's first byte to its complete body; the answer is not bounded (`PROMPTGATE_REQUEST_TIMEOUT_SECONDS`). */
  requestTimeoutMs: number;
  /** How long an idle kept-alive connection is held between requests (`PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS`). */
  keepAliveTimeoutMs: number;
  /** The cap on open client connections (`PROMPTGATE_MAX_CONNECTIONS`); unset: the runtime derives it from its open-file limit. */
  maxConnections: number | undefined;
  /** How long a shutdown lets calls in flight finish (`PROMPTGATE_DRAIN_SECONDS`). */
  drainMs: number;
}

/** The log levels `PROMPTGATE_LOG` takes, from the most to the least verbose, and `silent`. */
export const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** One of `logLevels`. */
export type LogLevel = (typeof logLevels)[number];

/** The formats `PROMPTGATE_LOG_FORMAT` takes: one JSON object per line, or lines for a person to read. */
export const logFormats = ["json", "pretty"] as const;

/** One of `logFormats`. */
export type LogFormat = (typeof logFormats)[number];

/**
 * A configuration value that cannot be used, in one line: the variable, its value (never for a key) and
 * what it has to be instead.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

type Environment = Readonly<Record<string, string | undefined>>;

/** How a runtime is reached. */
export interface ReadOptions {
  /** The runtime is reached beyond loopback, with no listen address to refuse at start-up (Workers). */
  beyondLoopback?: boolean;
}

/** Reads the configuration from environment variables; throws ConfigError naming a bad variable. */
export function readConfig(environment: Environment, options: ReadOptions = {}): Config {
  const simulateUnconfigured =
    readSimulated(environment) || !surfaces.some((surface) => isConfigured(environment, surface));
  const upstreams: Record<string, UpstreamConfig> = {};
  for (const surface of surfaces) upstreams[surface.name] = readUpstream(environment, surface, simulateUnconfigured);
  const known: KnownEnvironment = environment;
  const openRelay = readFlag(known, "PROMPTGATE_OPEN_RELAY", false);
  const gatewayKeys = readGatewayKeys(known.PROMPTGATE_KEYS);
  return {
    host: known.HOST || "127.0.0.1",
    port: readInteger(known, "PORT", 8787, 0, 65535),
    policiesDir: known.PROMPTGATE_POLICIES || "./policies",
    schemasDir: known.PROMPTGATE_SCHEMAS || "./schemas",
    defaultPolicy: known.PROMPTGATE_DEFAULT_POLICY || "default",
    upstreams,
    adminKey: known.PROMPTGATE_ADMIN_KEY || undefined,
    gatewayKeys,
    gatewayKeyMode: gatewayKeys.length > 0 || readKeyMode(known.PROMPTGATE_KEY_MODE),
    openRelay,
    passThroughServerKeys: options.beyondLoopback !== true || openRelay,
    corsOrigins: readCorsOrigins(known.PROMPTGATE_CORS_ORIGINS),
    db: known.PROMPTGATE_DB || "./data/promptgate.db",
    dbPoolSize: readInteger(known, "PROMPTGATE_DB_POOL", 10, 1, 1000),
    dbStatementTimeoutMs: readInteger(known, "PROMPTGATE_DB_STATEMENT_TIMEOUT_MS", 10_000, 100, 600_000),
    maxBodyBytes: readInteger(known, "PROMPTGATE_MAX_BODY_BYTES", 10_485_760, 1, Number.MAX_SAFE_INTEGER),
    logLevel: readLogLevel(known.PROMPTGATE_LOG),
    logFormat: readLogFormat(known.PROMPTGATE_LOG_FORMAT),
    server: readServerConfig(known),
    metrics: readFlag(known, "PROMPTGATE_METRICS", true),
    metricsPublic: readFlag(known, "PROMPTGATE_METRICS_PUBLIC", false),
    metricsPort: known.PROMPTGATE_METRICS_PORT
      ? readInteger(known, "PROMPTGATE_METRICS_PORT", 0, 0, 65535, "the gateway's port")
      : undefined,
    workers: known.PROMPTGATE_WORKERS === "auto" ? "auto" : readInteger(known, "PROMPTGATE_WORKERS", 1, 1, 256, "1"),
    upstreamTimeouts: {
      connect: readSeconds(known, "PROMPTGATE_UPSTREAM_CONNECT_SECONDS", 10),
      firstByte: readSeconds(known, "PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS", 120),
      idle: readSeconds(known, "PROMPTGATE_UPSTREAM_IDLE_SECONDS", 120),
    },
  };
}

/**
 * The server's limits. A gateway's requests are small and sent at once, its answers long: the
 * header and request timeouts bound only receiving a request (a streamed answer may run for
 * minutes), and Node refuses a header timeout longer than the request timeout.
 */
function readServerConfig(environment: KnownEnvironment): ServerConfig {
  const day = 86_400;
  const headersSeconds = readInteger(environment, "PROMPTGATE_HEADERS_TIMEOUT_SECONDS", 10, 1, day);
  const requestSeconds = readInteger(environment, "PROMPTGATE_REQUEST_TIMEOUT_SECONDS", 120, 1, day);
  if (headersSeconds > requestSeconds) {
    throw new ConfigError(
      `PROMPTGATE_HEADERS_TIMEOUT_SECONDS=${headersSeconds} exceeds PROMPTGATE_REQUEST_TIMEOUT_SECONDS=${requestSeconds}: lower the first or raise the second.`,
    );
  }
  return {
    headersTimeoutMs: headersSeconds * 1000,
    requestTimeoutMs: requestSeconds * 1000,
    keepAliveTimeoutMs: readInteger(environment, "PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS", 5, 1, day) * 1000,
    maxConnections: environment.PROMPTGATE_MAX_CONNECTIONS
      ? readInteger(environment, "PROMPTGATE_MAX_CONNECTIONS", 1, 1, 10_000_000, "from the open-file limit")
      : undefined,
    drainMs: readInteger(environment, "PROMPTGATE_DRAIN_SECONDS", 30, 0, day) * 1000,
  };
}

/** `true` or `false` (unset: `fallback`); any other value names the variable. */
function readFlag(environment: KnownEnvironment, variable: VariableName, fallback: boolean): boolean {
  const text = environment[variable];
  if (text === undefined || text === "") return fallback;
  if (text === "true" || text === "false") return text === "true";
  throw new ConfigError(`${variable}=${shown(text)} must be true or false (unset: ${fallback}).`);
}

/** Comma-separated gateway keys; unset or empty means pass-through auth. */
function readKeyMode(text: string | undefined): boolean {
  if (text === undefined || text.trim() === "") return false;
  if (text.trim() === "keys") return true;
  throw new ConfigError(
    'PROMPTGATE_KEY_MODE must be "keys" (clients must present a gateway key) or unset (decided by the keys there are).',
  );
}

function readGatewayKeys(text: string | undefined): readonly string[] {
  if (text === undefined || text.trim() === "") return [];
  const keys = text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
  // The value is not shown: it is meant to hold keys.
  if (keys.length === 0) {
    throw new ConfigError(
      "PROMPTGATE_KEYS holds no key, only commas and spaces: list the gateway keys separated by commas, or unset it for pass-through auth.",
    );
  }
  return keys;
}

/**
 * Comma-separated origins as browsers send them (`https://app.example.com`, `http://127.0.0.1:5173`), or `*`;
 * unset or empty means no CORS at all.
 */
function readCorsOrigins(text: string | undefined): readonly string[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const origins = text
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  for (const origin of origins) {
    // An origin is only scheme, host and port: a path, a trailing slash or a wildcard host never matches a browser's.
    if (origin !== "*" && (origin.includes("*") || !URL.canParse(origin) || new URL(origin).origin !== origin)) {
      throw new ConfigError(
        `PROMPTGATE_CORS_ORIGINS holds "${origin}", which is no origin: list origins such as https://app.example.com (scheme, host and port, no path), or *.`,
      );
    }
  }
  return origins;
}

function readLogLevel(text: string | undefined): LogLevel {
  if (text === undefined || text === "") return "info";
  const level = logLevels.find((candidate) => candidate === text.trim().toLowerCase());
  if (level === undefined) {
    throw new ConfigError(`PROMPTGATE_LOG=${shown(text)} must be one of ${logLevels.join(", ")} (unset: info).`);
  }
  return level;
}

function readLogFormat(text: string | undefined): LogFormat | undefined {
  if (text === undefined || text === "") return undefined;
  const format = logFormats.find((candidate) => candidate === text.trim().toLowerCase());
  if (format === undefined) {
    throw new ConfigError(
      `PROMPTGATE_LOG_FORMAT=${shown(text)} must be one of ${logFormats.join(", ")} (unset: pretty on a terminal, else json).`,
    );
  }
  return format;
}

/** `PROMPTGATE_SIMULATED=on`: every provider not configured is simulated, as on the first run. */
function readSimulated(environment: KnownEnvironment): boolean {
  const text = environment.PROMPTGATE_SIMULATED;
  if (text === undefined || text === "" || text === "off") return false;
  if (text === "on") return true;
  throw new ConfigError(
    `PROMPTGATE_SIMULATED=${shown(text)} must be on or off (unset: simulated only while no provider is configured).`,
  );
}

/** Whether a provider is configured: a real upstream URL (not `simulated`) or a server-held key is set. */
function isConfigured(environment: Environment, surface: Surface): boolean {
  const { variable, keyVariable } = surface.upstream;
  const url = environment[variable];
  return Boolean(environment[keyVariable]) || (Boolean(url) && url !== "simulated");
}

/**
 * A provider's upstream (contract section 11): `simulated` when set so, or when it is not configured and
 * unconfigured ones are simulated (the first run, `PROMPTGATE_SIMULATED=on`); else its configured URL, else its
 * public one; a provider with neither is unavailable, each call refused naming its URL variable.
 */
function readUpstream(environment: Environment, surface: Surface, simulateUnconfigured: boolean): UpstreamConfig {
  const { variable, keyVariable, defaultBaseUrl } = surface.upstream;
  const serverKey = environment[keyVariable] || undefined;
  const configured = environment[variable] || undefined;
  if (configured === "simulated" || (simulateUnconfigured && !isConfigured(environment, surface))) {
    return {
      baseUrl: `${simulatedOrigin}${surface.simulated.basePath}`,
      simulated: true,
      label: "simulated",
      serverKey,
    };
  }
  const target = configured ?? defaultBaseUrl;
  const unconfigured = !isConfigured(environment, surface);
  if (target === undefined)
    return { baseUrl: "", simulated: false, label: "unconfigured", serverKey, unavailable: variable };
  const baseUrl = target.replace(/\/+$/, "");
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    const example = defaultBaseUrl ?? "http://127.0.0.1:8000/v1";
    throw new ConfigError(
      `${variable}=${shown(withoutCredentials(target))} must be an http(s) URL such as ${example}, or "simulated".`,
    );
  }
  const upstream: UpstreamConfig = { baseUrl, simulated: false, label: new URL(baseUrl).origin, serverKey };
  return unconfigured ? { ...upstream, unconfigured } : upstream;
}

/** The upstream of a provider (a surface's name); every registered surface has one. */
export function upstreamOf(config: Config, provider: string): UpstreamConfig {
  const upstream = config.upstreams[provider];
  if (upstream === undefined) throw new Error(`No upstream is configured for provider ${provider}.`);
  return upstream;
}

/** An integer variable from `min` to `max`; `unset` says what an unset one means where that is not `fallback`. */
function readInteger(
  environment: KnownEnvironment,
  variable: VariableName,
  fallback: number,
  min: number,
  max: number,
  unset = String(fallback),
): number {
  const text = environment[variable];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${variable}=${shown(text)} must be a whole number ${range} (unset: ${unset}).`);
  }
  return value;
}

/** A number of seconds above 0 and at most a day; fractions allowed. */
function readSeconds(environment: KnownEnvironment, variable: VariableName, fallback: number): number {
  const text = environment[variable];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > 86_400) {
    throw new ConfigError(
      `${variable}=${shown(text)} must be a number of seconds above 0, at most 86400 (unset: ${fallback}).`,
    );
  }
  return value;
}

/**
 * A value as a refusal quotes it: in JSON quotes, so that spaces and an empty value show, cut short, and
 * with anything shaped like a key redacted (a key pasted into the wrong variable stays out of the log).
 */
export function shown(value: string): string {
  const cut = value.length > 120 ? `${value.slice(0, 120)}…` : value;
  return JSON.stringify(redactKeys(cut, []));
}

/** A URL without its user, password and query, which may hold credentials; other text as it is. */
export function withoutCredentials(text: string): string {
  if (!URL.canParse(text)) return text;
  const url = new URL(text);
  url.username = "";
  url.password = "";
  url.search = "";
  return url.href;
}
