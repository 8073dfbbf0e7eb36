import { surfaces } from "../../../surfaces/surfaces.js";

/** Each provider's upstream variables, as the surfaces name them, in the help's two columns. */
function providerLines(): string {
  const lines = surfaces.map(({ upstream }) => {
    const line = `  ${upstream.variable.padEnd(31)}${upstream.describe}, or "simulated"`;
    return upstream.variable.length < 31
      ? line
      : `  ${upstream.variable}\n${" ".repeat(33)}${upstream.describe}, or "simulated"`;
  });
  const keys = surfaces.map(({ upstream }) => upstream.keyVariable).join(", ");
  return [...lines, `  ${keys}`, `${" ".repeat(33)}server-held provider keys`].join("\n");
}

/** The `--help` text of `promptgate`: every command, and the environment the gateway reads. */
export const mainHelp = `promptgate: an HTTP gateway that keeps every LLM call inside a central prompt-size policy.

Usage:
  promptgate [serve]                     start the gateway (the default command)
  promptgate replay --policy NAME FILE…  replay stored request bodies through the gateway's checks,
                                         offline, and print one JSON report (promptgate replay --help)
  promptgate init [DIR] [--force]        copy the shipped policies/ and schemas/ into DIR (default .)
                                         for editing (promptgate init --help)
  promptgate selftest [--timeout S]      the release check: one synthetic answer job per provider,
                                         end to end, with a validated structured answer; prints a
                                         JSON report (promptgate selftest --help)
  promptgate signature SCHEMA.json       a schema's compact signature and form example, with their
                                         sizes (promptgate signature --help)
  promptgate --version                   print the version
  promptgate --help                      show this text

From the repository, npm start runs promptgate serve.

Configuration comes from the environment (and a .env file in the working directory):
  PORT, HOST                     listen address (default 8787, 127.0.0.1)
  PROMPTGATE_POLICIES            folder of policy files (default ./policies if the working directory
                                 has one, else the policies shipped with promptgate)
  PROMPTGATE_SCHEMAS             folder of named JSON Schemas (default ./schemas if the working directory
                                 has one, else the schemas shipped with promptgate)
  PROMPTGATE_DEFAULT_POLICY      policy used when the URL names none (default "default")
${providerLines()}
  PROMPTGATE_KEYS                comma-separated gateway keys; clients must present one (unset: pass-through)
  PROMPTGATE_ADMIN_KEY           bearer key for /promptgate/admin/* (unset: admin routes off)
  PROMPTGATE_CORS_ORIGINS        comma-separated origins browser pages may call from, or * (unset: no CORS)
  PROMPTGATE_DB                  SQLite file for state, a postgres:// connection string (several nodes
                                 share it), or "memory" (default ./data/promptgate.db)
  PROMPTGATE_DB_POOL             PostgreSQL connections per process at most (default 10)
  PROMPTGATE_DB_STATEMENT_TIMEOUT_MS
                                 PostgreSQL statement timeout (default 10000)
  PROMPTGATE_MAX_BODY_BYTES      request body cap (default 10485760)
  PROMPTGATE_LOG                 call log level: trace, debug, info, warn, error, fatal or silent (default info)
  PROMPTGATE_LOG_FORMAT          json or pretty (default: pretty on a terminal, else JSON)
  PROMPTGATE_HEADERS_TIMEOUT_SECONDS
                                 time a client has to send a request's headers (default 10)
  PROMPTGATE_REQUEST_TIMEOUT_SECONDS
                                 time a client has to send a whole request; answers are not bounded (default 120)
  PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS
                                 how long an idle connection is kept open between requests (default 5)
  PROMPTGATE_MAX_CONNECTIONS     cap on open client connections (default: (open-file limit - 64) / 2)
  PROMPTGATE_DRAIN_SECONDS       on SIGTERM/SIGINT, how long calls in flight may finish (default 30)
  PROMPTGATE_METRICS             false: keep no Prometheus metrics, no GET /metrics (default true)
  PROMPTGATE_METRICS_PUBLIC      true: GET /metrics answers without the admin key (default false)
  PROMPTGATE_METRICS_PORT        serve GET /metrics on this port only (default: the gateway's port)
  OTEL_EXPORTER_OTLP_ENDPOINT    export each call as an OpenTelemetry span over OTLP/HTTP (unset: no traces);
                                 OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS, OTEL_SERVICE_NAME as usual
  PROMPTGATE_WORKERS             gateway processes sharing the port, or "auto" for one per core (default 1);
                                 more than one needs a SQLite file or PostgreSQL, not memory
With no upstream and no key for a provider, its calls go to the built-in simulated provider.
Once listening, the gateway writes one JSON line to stdout (event "listening": its address,
data file, folders, policy versions, auth mode and upstreams); it logs in JSON lines there.
`;
