import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runNode, tsxLoader } from "../support/node-run.js";

// The Node log writes stdout synchronously: a line logged is in stdout before the next statement runs, so a crash
// loses none, and the process's loggers (the start-up line's, the calls', the policy reload's) never reorder lines.

describe("the Node log on stdout", { timeout: 60_000 }, () => {
  it("holds every line logged before the process was killed, in the order logged", async () => {
    const lines = 200;
    const { signal, stdout, stderr } = await runNode(
      ["--import", tsxLoader, resolve("test/fixtures/logging/log-then-kill.ts")],
      { LINES: String(lines) },
    );
    expect(signal, stderr).toBe("SIGKILL");
    const numbers = stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { line: number }).line);
    expect(numbers).toEqual(Array.from({ length: lines }, (_, line) => line));
  });
});
