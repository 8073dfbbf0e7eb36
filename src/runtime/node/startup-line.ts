import { resolve } from "node:path";
import type { DestinationStream } from "pino";
import { type Config, type UpstreamConfig, withoutCredentials } from "../../config.js";
import type { PolicyVersion } from "../../policy/policy.js";
import { type LogSettings, nodeLogger } from "./call-logger.js";
import type { ChosenFolder } from "./config-folders.js";
import { isPostgresUrl } from "./open-store.js";

/** What the start-up line says besides its message: where the gateway listens and what it serves with. */
export interface StartupLine {
  event: "listening";
  url: string;
  version: string;
  /** The process's id: the one `kill -HUP` reloads, and with PROMPTGATE_WORKERS the worker that wrote the line. */
  pid: number;
  /** The SQLite file, as an absolute path, a PostgreSQL database without its credentials, or `memory`. */
  data_file: string;
  policies_folder: string;
  policies_from: ChosenFolder["source"];
  schemas_folder: string;
  schemas_from: ChosenFolder["source"];
  /** The current version of every policy, as `name@` plus 12 hex digits. */
  policies: string[];
  default_policy: string;
  auth: "gateway keys" | "pass-through";
  admin_routes: "on" | "off";
  /** Per surface: the upstream's base URL, `simulated`, or `unconfigured (VARIABLE)` where it has none. */
  upstreams: Record<string, string>;
}

/** What the start-up line is made from. */
export interface StartupFacts {
  url: string;
  version: string;
  config: Config;
  folders: { policies: ChosenFolder; schemas: ChosenFolder };
  /** The policy versions the gateway resolves plain names to. */
  policies: readonly PolicyVersion[];
}

/** The start-up line's fields, for a person and a log collector alike. */
export function startupLine({ url, version, config, folders, policies }: StartupFacts): StartupLine {
  return {
    event: "listening",
    url,
    version,
    pid: process.pid,
    data_file:
      config.db === "memory" ? "memory" : isPostgresUrl(config.db) ? withoutCredentials(config.db) : resolve(config.db),
    policies_folder: folders.policies.path,
    policies_from: folders.policies.source,
    schemas_folder: folders.schemas.path,
    schemas_from: folders.schemas.source,
    policies: policies.map((version) => version.ref),
    default_policy: config.defaultPolicy,
    auth: config.gatewayKeyMode ? "gateway keys" : "pass-through",
    admin_routes: config.adminKey === undefined ? "off" : "on",
    upstreams: Object.fromEntries(
      Object.entries(config.upstreams).map(([name, upstream]) => [name, upstreamShown(upstream)]),
    ),
  };
}

/** Where a provider's calls go, as the line shows it. */
function upstreamShown(upstream: UpstreamConfig): string {
  if (upstream.simulated) return "simulated";
  return upstream.unavailable === undefined ? upstream.baseUrl : `unconfigured (${upstream.unavailable})`;
}

/**
 * The line's message. It keeps the words of the plain-text line it replaces, the URL followed by a space, so
 * that a script waiting for `promptgate listening on (http://\S+)` still finds the address.
 */
export function startupMessage(line: StartupLine): string {
  const upstreams = Object.entries(line.upstreams)
    .map(([name, upstream]) => `${name}: ${upstream === "simulated" ? "simulated provider" : upstream}`)
    .join(", ");
  return `promptgate listening on ${line.url} (${upstreams})`;
}

/**
 * Writes the start-up line to stdout through the Node log (JSON, or pretty as `PROMPTGATE_LOG_FORMAT` says). It
 * is written whatever `PROMPTGATE_LOG` says, as the one line that tells a supervisor the gateway is up.
 */
export function writeStartupLine(line: StartupLine, settings: LogSettings, destination?: DestinationStream): void {
  nodeLogger({ ...settings, logLevel: "info" }, destination).info(line, startupMessage(line));
}
