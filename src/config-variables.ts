import { surfaces } from "./surfaces/surfaces.js";

/** One environment variable the gateway reads: its name and what `--help` and the docs say of it. */
export interface ConfigVariable {
  name: string;
  /** What it sets, with its default, in a line or two. */
  describe: string;
  /** The heading the configuration reference lists it under. */
  section: string;
}

const general = [
  { name: "PORT", section: "Listening and files", describe: "listen port (default 8787)" },
  { name: "HOST", section: "Listening and files", describe: "listen address (default 127.0.0.1)" },
  {
    name: "PROMPTGATE_POLICIES",
    section: "Listening and files",
    describe:
      "folder of policy files (default ./policies if the working directory has one, else the policies shipped with promptgate)",
  },
  {
    name: "PROMPTGATE_SCHEMAS",
    section: "Listening and files",
    describe:
      "folder of named JSON Schemas (default ./schemas if the working directory has one, else the schemas shipped with promptgate)",
  },
  {
    name: "PROMPTGATE_DEFAULT_POLICY",
    section: "Listening and files",
    describe: 'policy used when the URL names none (default "default")',
  },
] as const satisfies readonly ConfigVariable[];

/** Each provider's variables, as its surface declares them. */
function providerVariables(): ConfigVariable[] {
  return surfaces.flatMap(({ name, upstream }) => [
    { name: upstream.variable, describe: `${upstream.describe}, or "simulated"`, section: "Providers" },
    { name: upstream.keyVariable, describe: `server-held key of ${name}`, section: "Providers" },
  ]);
}

const rest = [
  {
    name: "PROMPTGATE_SIMULATED",
    section: "Providers",
    describe: "on: the simulated provider answers for every provider not configured (default: only when none is)",
  },
  {
    name: "PROMPTGATE_KEYS",
    section: "Access",
    describe:
      "comma-separated unnamed gateway keys; clients must present a gateway key (unset, no named key and no PROMPTGATE_KEY_MODE: pass-through)",
  },
  {
    name: "PROMPTGATE_KEY_MODE",
    section: "Access",
    describe:
      "keys: clients must present a gateway key even before any is made (default: when PROMPTGATE_KEYS is set or a named key exists at start-up)",
  },
  {
    name: "PROMPTGATE_OPEN_RELAY",
    section: "Access",
    describe:
      "true: in pass-through, callers beyond loopback may use the server-held provider keys (default false: refused)",
  },
  {
    name: "PROMPTGATE_ADMIN_KEY",
    section: "Access",
    describe: "bearer key for /promptgate/admin/* (unset: admin routes off)",
  },
  {
    name: "PROMPTGATE_CORS_ORIGINS",
    section: "Access",
    describe: "comma-separated origins browser pages may call from, or * (unset: no CORS)",
  },
  {
    name: "PROMPTGATE_DB",
    section: "Storage",
    describe:
      'SQLite file for state, a postgres:// connection string (several nodes share it), or "memory" (default ./data/promptgate.db)',
  },
  {
    name: "PROMPTGATE_DB_POOL",
    section: "Storage",
    describe: "PostgreSQL connections per process at most (default 10)",
  },
  {
    name: "PROMPTGATE_DB_STATEMENT_TIMEOUT_MS",
    section: "Storage",
    describe: "PostgreSQL statement timeout (default 10000)",
  },
  {
    name: "PROMPTGATE_MAX_BODY_BYTES",
    section: "Requests and timeouts",
    describe: "request body cap (default 10485760)",
  },
  {
    name: "PROMPTGATE_LOG",
    section: "Logs, metrics and traces",
    describe: "call log level: trace, debug, info, warn, error, fatal or silent (default info)",
  },
  {
    name: "PROMPTGATE_LOG_FORMAT",
    section: "Logs, metrics and traces",
    describe: "json or pretty (default: pretty on a terminal, else JSON)",
  },
  {
    name: "PROMPTGATE_HEADERS_TIMEOUT_SECONDS",
    section: "Requests and timeouts",
    describe: "time a client has to send a request's headers (default 10)",
  },
  {
    name: "PROMPTGATE_REQUEST_TIMEOUT_SECONDS",
    section: "Requests and timeouts",
    describe: "time a client has to send a whole request; answers are not bounded (default 120)",
  },
  {
    name: "PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS",
    section: "Requests and timeouts",
    describe: "how long an idle connection is kept open between requests (default 5)",
  },
  {
    name: "PROMPTGATE_MAX_CONNECTIONS",
    section: "Requests and timeouts",
    describe: "cap on open client connections (default: (open-file limit - 64) / 2)",
  },
  {
    name: "PROMPTGATE_DRAIN_SECONDS",
    section: "Requests and timeouts",
    describe: "on SIGTERM/SIGINT, how long calls in flight may finish (default 30)",
  },
  {
    name: "PROMPTGATE_UPSTREAM_CONNECT_SECONDS",
    section: "Requests and timeouts",
    describe: "time to open a provider connection; a policy may override it (default 10)",
  },
  {
    name: "PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS",
    section: "Requests and timeouts",
    describe: "time a streamed call waits for the provider's answer to start; a policy may override it (default 120)",
  },
  {
    name: "PROMPTGATE_UPSTREAM_IDLE_SECONDS",
    section: "Requests and timeouts",
    describe: "time a provider's stream may go silent between events; a policy may override it (default 120)",
  },
  {
    name: "PROMPTGATE_METRICS",
    section: "Logs, metrics and traces",
    describe: "false: keep no Prometheus metrics, no GET /metrics (default true)",
  },
  {
    name: "PROMPTGATE_METRICS_PUBLIC",
    section: "Logs, metrics and traces",
    describe: "true: GET /metrics answers without the admin key (default false)",
  },
  {
    name: "PROMPTGATE_METRICS_PORT",
    section: "Logs, metrics and traces",
    describe: "serve GET /metrics on this port only (default: the gateway's port)",
  },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    section: "Logs, metrics and traces",
    describe:
      "export each call as an OpenTelemetry span over OTLP/HTTP (unset: no traces); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS, OTEL_SERVICE_NAME as usual",
  },
  {
    name: "PROMPTGATE_WORKERS",
    section: "Processes",
    describe:
      'gateway processes sharing the port, or "auto" for one per core (default 1); more than one needs a SQLite file or PostgreSQL, not memory',
  },
] as const satisfies readonly ConfigVariable[];

/** Every variable the gateway reads, in the order `--help` and the docs list them. */
export const configVariables: readonly ConfigVariable[] = [...general, ...providerVariables(), ...rest];

/** The name of a variable of the table that is not a provider's (those the surfaces name). */
export type VariableName = (typeof general)[number]["name"] | (typeof rest)[number]["name"];

/** The environment as the configuration reads it: only the variables of the table, so none can be read unlisted. */
export type KnownEnvironment = Readonly<Partial<Record<VariableName, string>>>;

/**
 * One line per `PROMPTGATE_*` variable of `environment` that the gateway does not read, with the known name
 * closest to it (a typo is otherwise silently ignored, and its default used).
 */
export function unknownVariableWarnings(environment: Readonly<Record<string, string | undefined>>): string[] {
  const known = configVariables.map((variable) => variable.name);
  return Object.keys(environment)
    .filter((name) => name.startsWith("PROMPTGATE_") && !known.includes(name))
    .sort()
    .map((name) => {
      const closest = closestName(name, known);
      const hint = closest === undefined ? "" : `; did you mean ${closest}?`;
      return `promptgate: ${name} is no variable promptgate reads, so it has no effect${hint}`;
    });
}

/** The known name nearest to `name` by edit distance, if it is near enough to be a typo of it. */
function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each. */
function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const substitution = previous[column - 1]! + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[column]! + 1, current[column - 1]! + 1));
    }
    previous = current;
  }
  return previous[to.length]!;
}
