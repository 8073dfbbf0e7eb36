import { existsSync } from "node:fs";
import { startNodeGateway } from "./node-gateway.js";
import { stopOnSignals } from "./stop-on-signals.js";

const help = `promptgate: an HTTP gateway that keeps every LLM call inside a central prompt-size policy.

Usage: npm start            (or: tsx src/runtime/node/main.ts)

Configuration comes from the environment (and a .env file in the working directory):
  PORT, HOST                     listen address (default 8787, 127.0.0.1)
  PROMPTGATE_POLICIES            folder of policy files (default ./policies)
  PROMPTGATE_SCHEMAS             folder of named JSON Schemas (default ./schemas)
  PROMPTGATE_DEFAULT_POLICY      policy used when the URL names none (default "default")
  PROMPTGATE_UPSTREAM_OPENAI     upstream base URL incl. /v1, or "simulated"
  PROMPTGATE_UPSTREAM_GEMINI     upstream base URL without version, or "simulated"
  PROMPTGATE_UPSTREAM_ANTHROPIC  upstream base URL without /v1, or "simulated"
  OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY   server-held provider keys
  PROMPTGATE_KEYS                comma-separated gateway keys; clients must present one (unset: pass-through)
  PROMPTGATE_ADMIN_KEY           bearer key for /promptgate/admin/* (unset: admin routes off)
  PROMPTGATE_DB                  SQLite file for state, or "memory" (default ./data/promptgate.db)
  PROMPTGATE_MAX_BODY_BYTES      request body cap (default 10485760)
  PROMPTGATE_LOG                 call log level: trace, debug, info, warn, error, fatal or silent (default info)
  PROMPTGATE_HEADERS_TIMEOUT_SECONDS
                                 time a client has to send a request's headers (default 10)
  PROMPTGATE_REQUEST_TIMEOUT_SECONDS
                                 time a client has to send a whole request; answers are not bounded (default 120)
  PROMPTGATE_KEEP_ALIVE_TIMEOUT_SECONDS
                                 how long an idle connection is kept open between requests (default 5)
  PROMPTGATE_MAX_CONNECTIONS     cap on open client connections (default: (open-file limit - 64) / 2)
  PROMPTGATE_DRAIN_SECONDS       on SIGTERM/SIGINT, how long calls in flight may finish (default 30)
With no upstream and no key for a provider, its calls go to the built-in simulated provider.
`;

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  process.stdout.write(help);
  process.exit(0);
}

if (existsSync(".env")) process.loadEnvFile(".env");

try {
  const gateway = await startNodeGateway(process.env);
  const modes = Object.entries(gateway.config.upstreams)
    .map(([name, upstream]) => `${name}: ${upstream.simulated ? "simulated provider" : upstream.baseUrl}`)
    .join(", ");
  process.stdout.write(`promptgate listening on ${gateway.url} (${modes})\n`);
  stopOnSignals(gateway);
} catch (error) {
  process.stderr.write(`promptgate cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
