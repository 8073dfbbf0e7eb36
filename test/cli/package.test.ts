import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";

// The package as a user gets it: packed by `npm pack` (whose `prepare` builds dist/), installed without its dev
// dependencies into a folder outside the repository, and run from there. About 1 to 2 minutes, most of it the
// build and the install. better-sqlite3 is the one part not built there: its install script compiles it from
// source (1.5 to 4 minutes offline), so the install skips scripts and takes the repository's own build of the
// same version, compiled for this Node.

const repository = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const chatBody = { model: "gpt-4o", messages: [{ role: "user", content: "Hello" }] };

let folder: string;
let app: string;
let packedFiles: string[];

/** Puts the repository's compiled better-sqlite3 into the install, if it is the same version (else compiles it). */
async function useRepositorySqliteBuild(directory: string): Promise<void> {
  const installed = join(directory, "node_modules", "better-sqlite3");
  const own = join(repository, "node_modules", "better-sqlite3");
  const versionOf = (root: string) => JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
  if (versionOf(installed) !== versionOf(own)) {
    // A newer release than the lockfile's: built as npm would build it.
    await run("npm", ["rebuild", "better-sqlite3"], { cwd: directory });
    return;
  }
  mkdirSync(join(installed, "build", "Release"), { recursive: true });
  copyFileSync(
    join(own, "build", "Release", "better_sqlite3.node"),
    join(installed, "build", "Release", "better_sqlite3.node"),
  );
}

describe("the packed package", () => {
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "promptgate-package-"));
    // The build's errors (tsc's) are on stdout, which a failed command's message leaves out.
    const packed = await run("npm", ["pack", "--json", "--pack-destination", folder], {
      cwd: repository,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { message: string; stdout: string }) =>
      Promise.reject(new Error(`${error.message}${error.stdout}`)),
    );
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    packedFiles = files.map((file) => file.path);
    app = join(folder, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), '{"name": "promptgate-user", "private": true}\n');
    await run(
      "npm",
      [
        "install",
        "--omit=dev",
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        join(folder, filename),
      ],
      { cwd: app, maxBuffer: 16 * 1024 * 1024 },
    );
    await useRepositorySqliteBuild(app);
  }, 360_000);
  afterAll(() => {
    // The install is some 50 MB.
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it("holds the compiled gateway, its bin, policies, schemas and migrations, and no TypeScript or tests", () => {
    for (const path of [
      "bin/promptgate.js",
      "dist/runtime/node/main.js",
      "dist/runtime/node/schema-compiler-worker.js",
      "policies/default.toml",
      "schemas/policy.schema.json",
      "migrations/0001_initial.sql",
      "README.md",
      "package.json",
    ]) {
      expect(packedFiles).toContain(path);
    }
    expect(
      packedFiles.filter(
        (path) =>
          (path.endsWith(".ts") && !path.endsWith(".d.ts")) || path.startsWith("src/") || path.startsWith("test/"),
      ),
    ).toEqual([]);
    expect(packedFiles.filter((path) => path.startsWith("dist/worker/"))).toEqual([]);
  });

  it("installs without dev dependencies: no tsx, TypeScript or test tools", () => {
    for (const name of ["tsx", "typescript", "vitest", "esbuild", "wrangler"]) {
      expect(existsSync(join(app, "node_modules", name))).toBe(false);
    }
    expect(existsSync(join(app, "node_modules", "better-sqlite3"))).toBe(true);
  });

  it("exports the window toolkit as promptgate/window, with its types", async () => {
    expect(packedFiles).toContain("dist/window/index.d.ts");
    const script =
      'import("promptgate/window").then(async (w) => console.log(JSON.stringify([w.codePoints("a😀"), (await w.fragment("a".repeat(450), { pageChars: 200 })).length, w.checkpointDue({ resultsBytes: 4001, logBytes: 0 })])))';
    const imported = await run("node", ["--input-type=module", "-e", script], { cwd: app });
    expect(JSON.parse(imported.stdout)).toEqual([2, 3, true]);
  });

  it("exports LangChain's retry decision as promptgate/langchain, with its types", async () => {
    expect(packedFiles).toContain("dist/clients/langchain.d.ts");
    const script =
      'import("promptgate/langchain").then((l) => { const e = { status: 422, error: { promptgate: { code: "RESPONSE_SCHEMA_INVALID" } } }; try { l.retryOnlyRetryable(e); console.log("retried"); } catch { console.log("stopped"); } })';
    const imported = await run("node", ["--input-type=module", "-e", script], { cwd: app });
    expect(imported.stdout).toBe("stopped\n");
  });

  it("answers npx promptgate --version and --help from a folder outside the repository", async () => {
    const version = await run("npx", ["promptgate", "--version"], { cwd: app });
    expect(version.stdout).toBe(`${packageJson.version}\n`);
    const help = await run("npx", ["promptgate", "--help"], { cwd: app });
    expect(help.stdout).toContain("promptgate init [DIR]");
    const refused = await run("npx", ["promptgate", "--port", "80"], { cwd: app }).catch((error) => error);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Usage:");
  }, 60_000);

  it("serves from there with the shipped policies and its data file there, answers a call, stops on SIGTERM", async () => {
    const gateway = await startInstalled(app);
    try {
      expect(gateway.line).toMatchObject({
        level: "info",
        service: "promptgate",
        event: "listening",
        data_file: join(app, "data", "promptgate.db"),
        policies_folder: join(app, "node_modules", "promptgate", "policies"),
        policies_from: "package",
        schemas_from: "package",
        auth: "pass-through",
        admin_routes: "off",
        upstreams: {
          openai: "simulated",
          gemini: "simulated",
          anthropic: "simulated",
          "openai-compatible": "simulated",
        },
      });
      const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer sk-anything", "content-type": "application/json" },
        body: JSON.stringify(chatBody),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-promptgate-prompt-size")).toContain('"check":"preflight"');
    } finally {
      gateway.child.kill("SIGTERM");
    }
    expect(await exited(gateway.child)).toBe(0);
    expect(existsSync(join(app, "data", "promptgate.db"))).toBe(true);
  }, 60_000);

  it("compiles response schemas in its worker thread from dist, without tsx", async () => {
    const compiler = join(app, "node_modules", "promptgate", "dist", "runtime", "node", "schema-compiler.js");
    const script = [
      `const { workerSchemaCompiler } = await import(${JSON.stringify(compiler)});`,
      "const compiler = workerSchemaCompiler();",
      'const outcome = await compiler.compile({ type: "object", properties: { a: { type: "string" } } });',
      'process.stdout.write("validate" in outcome ? "compiled" : JSON.stringify(outcome));',
      "await compiler.close();",
    ].join("\n");
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: app });
    expect(stdout).toBe("compiled");
  }, 30_000);

  it("replays a stored request with npx promptgate replay", async () => {
    writeFileSync(join(app, "stored.json"), JSON.stringify(chatBody));
    const { stdout } = await run("npx", ["promptgate", "replay", "--policy", "investigation.bounded", "stored.json"], {
      cwd: app,
    });
    expect(JSON.parse(stdout).summary).toMatchObject({ count: 1, passing: 1 });
  }, 30_000);

  it("copies its policies and schemas out with npx promptgate init", async () => {
    const { stdout } = await run("npx", ["promptgate", "init", "config"], { cwd: app });
    expect(stdout).toContain(`wrote`);
    expect(readFileSync(join(app, "config", "policies", "default.toml"), "utf8")).toBe(
      readFileSync(join(repository, "policies", "default.toml"), "utf8"),
    );
  }, 30_000);
});

describe("npm start in the repository", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    // Built by the packing above, or here when these tests run alone.
    if (!existsSync(join(repository, "dist", "runtime", "node", "main.js"))) {
      await run("npm", ["run", "build"], { cwd: repository });
    }
    upstream = await startFakeUpstream();
  }, 120_000);
  afterAll(async () => {
    await upstream?.close();
  });

  it("runs the compiled gateway, and SIGTERM sent to npm stops it: the port closes, no node process remains", async () => {
    const npm = spawn("npm", ["start"], {
      cwd: repository,
      env: { ...process.env, PORT: "0", PROMPTGATE_DB: "memory" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { url } = await listening(npm);
    const gatewayPid = childPids(npm.pid as number)[0] as number;
    expect(commandOf(gatewayPid)).toContain("node --no-memory-reducer dist/runtime/node/main.js");
    npm.kill("SIGTERM");
    expect(await exited(npm)).toBe(0);
    expect(alive(gatewayPid)).toBe(false);
    expect(await accepts(new URL(url))).toBe(false);
  }, 60_000);

  it("drains a call in flight on a Ctrl-C, which reaches the gateway from the terminal and again through npm", async () => {
    upstream.answerWith((_request, response) => {
      setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end(chatAnswer), 1_000);
    });
    // Its own process group, as a terminal's foreground job: a signal to the group reaches npm and the gateway.
    const npm = spawn("npm", ["start"], {
      cwd: repository,
      env: {
        ...process.env,
        PORT: "0",
        PROMPTGATE_DB: "memory",
        PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stderr = "";
    npm.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const { url } = await listening(npm);
    const call = fetch(`${url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-anything", "content-type": "application/json" },
      body: JSON.stringify(chatBody),
    });
    await until(() => upstream.received.length > 0);
    process.kill(-(npm.pid as number), "SIGINT");
    expect((await call).status).toBe(200);
    expect(await exited(npm)).toBe(0);
    expect(stderr).toContain("promptgate stopped on SIGINT");
    expect(stderr).toContain("1 request in flight finished");
  }, 60_000);
});

const chatAnswer = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
});

/**
 * The installed gateway started as README tells a supervisor to (one Node process, with `npm start`'s Node option),
 * with the default configuration.
 */
async function startInstalled(
  directory: string,
): Promise<{ child: ChildProcess; url: string; line: Record<string, unknown> }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, PORT: "0", HOST: "127.0.0.1" };
  for (const name of Object.keys(environment)) if (name.startsWith("PROMPTGATE_")) delete environment[name];
  const bin = join(directory, "node_modules", "promptgate", "bin", "promptgate.js");
  const child = spawn(process.execPath, ["--no-memory-reducer", bin], {
    cwd: directory,
    env: environment,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { child, ...(await listening(child)) };
}

/** Resolves with the start-up line once the process writes it (its first line on stdout). */
function listening(child: ChildProcess): Promise<{ url: string; line: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const line = stdout.split("\n").find((text) => text.includes('"event":"listening"'));
      if (line === undefined) return;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      resolve({ url: parsed.url as string, line: parsed });
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening: ${stderr}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

function commandOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function accepts(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}
