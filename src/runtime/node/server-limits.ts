import { readFileSync } from "node:fs";
import type { ServerOptions } from "node:http";
import type { ServerConfig } from "../../config.js";

/**
 * How often Node looks for connections past their header or request timeout. Its default, 30 s,
 * lets a flood of half-open connections outlive the header timeout by up to 30 s.
 */
const connectionsCheckingIntervalMs = 1_000;

/** Files the process keeps for itself: stdio, the event loop, the SQLite file and its journal, DNS. */
const reservedFiles = 64;

/** The cap where the open-file limit cannot be read (not Linux). */
const fallbackMaxConnections = 4_096;

/**
 * The `http.createServer` options that bound how long a client may take to send its request.
 * Node's request timeout ends once the request is received: it never cuts a long streamed answer.
 */
export function serverOptions(server: ServerConfig): ServerOptions {
  return {
    headersTimeout: server.headersTimeoutMs,
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    connectionsCheckingInterval: connectionsCheckingIntervalMs,
  };
}

/**
 * The connection cap when `PROMPTGATE_MAX_CONNECTIONS` is unset: half of what the open-file limit
 * leaves after the process's own files, since a client connection in flight may hold an upstream
 * connection too. Past the cap Node closes new connections at once instead of running out of files.
 */
export function defaultMaxConnections(openFiles: number | undefined): number {
  if (openFiles === undefined) return fallbackMaxConnections;
  return Math.max(16, Math.floor((openFiles - reservedFiles) / 2));
}

/** The process's limit on open files from Linux's `/proc/self/limits`; undefined elsewhere or when unlimited. */
export function openFileLimit(limits: string | undefined = readProcessLimits()): number | undefined {
  const soft = Number(/^Max open files\s+(\S+)/m.exec(limits ?? "")?.[1]);
  return Number.isSafeInteger(soft) && soft > 0 ? soft : undefined;
}

function readProcessLimits(): string | undefined {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
}
