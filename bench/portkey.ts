import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BenchProcess, freePort, startProcess } from "./processes.js";

/** The Portkey gateway version the bench installs: pinned, so that two runs compare the same peer. */
export const portkeyVersion = "1.15.2";

const run = promisify(execFile);

/**
 * Installs `@portkey-ai/gateway` into `bench/.tmp/portkey-<version>` unless it is there already (never
 * into promptgate's own dependencies), and returns the path of its Node entry.
 */
export async function installPortkey(tmpDirectory: string): Promise<string> {
  const prefix = join(tmpDirectory, `portkey-${portkeyVersion}`);
  const entry = join(prefix, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js");
  if (existsSync(entry)) return entry;
  await mkdir(prefix, { recursive: true });
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  await run(
    npm,
    [
      "install",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `@portkey-ai/gateway@${portkeyVersion}`,
    ],
    { timeout: 180_000 },
  );
  if (!existsSync(entry)) throw new Error(`npm installed @portkey-ai/gateway but ${entry} is missing.`);
  return entry;
}

/**
 * Starts Portkey's Node server (`build/start-server.js --port=N --headless`, its README's `npx @portkey-ai/gateway`
 * without the log UI). A request reaches an OpenAI-compatible upstream with `x-portkey-provider: openai` and
 * `x-portkey-custom-host: <base URL incl. /v1>`; 127.0.0.1 is among its default trusted custom hosts.
 */
export async function startPortkey(entry: string): Promise<{ process: BenchProcess; port: number }> {
  // Portkey prints a spinner and then its URL in colour codes; its port is chosen here, so readiness is a TCP probe.
  const port = await freePort();
  return startProcess([entry, `--port=${port}`, "--headless"], {}, port);
}
