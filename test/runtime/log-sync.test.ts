import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

// The Node log writes stdout synchronously: a line logged is in stdout before the next statement runs, so a crash
// loses none, and the process's loggers (the start-up line's, the calls', the policy reload's) never reorder lines.

const tsxLoader = pathToFileURL(
  join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/loader.mjs"),
).href;

describe("the Node log on stdout", { timeout: 60_000 }, () => {
  it("holds every line logged before the process was killed, in the order logged", async () => {
    const lines = 200;
    const child = spawn(process.execPath, ["--import", tsxLoader, resolve("test/fixtures/logging/log-then-kill.ts")], {
      env: { ...process.env, LINES: String(lines) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const signal = await new Promise((resolvePromise) =>
      child.once("close", (_code, signal) => resolvePromise(signal)),
    );
    expect(signal, stderr).toBe("SIGKILL");
    const numbers = stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { line: number }).line);
    expect(numbers).toEqual(Array.from({ length: lines }, (_, line) => line));
  });
});
