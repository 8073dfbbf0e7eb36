import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runNode, tsxLoader } from "../support/node-run.js";

// The Node log writes the lines of one turn of the event loop together at the turn's end, in writes of whole lines up
// to 4 KiB, synchronously, from the event loop's own thread, and what waits when the process exits: only a process
// killed outright loses the lines of the turn it was in. The process's loggers (the start-up line's, the calls', the
// policy reload's) share one stdout, so they never reorder lines.

async function loggedThen(end: string, lines: number, via = "log", throwAt = "") {
  const run = await runNode(["--import", tsxLoader, resolve("test/fixtures/logging/log-then-kill.ts")], {
    LINES: String(lines),
    END: end,
    VIA: via,
    THROW_AT: throwAt,
  });
  const numbers = run.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { line: number }).line);
  return { ...run, numbers };
}

const inOrder = (lines: number) => Array.from({ length: lines }, (_, line) => line);

describe("the Node log on stdout", { timeout: 60_000 }, () => {
  it("holds every line logged before the turn in which the process was killed, in the order logged", async () => {
    const { signal, stderr, numbers } = await loggedThen("kill", 200);
    expect(signal, stderr).toBe("SIGKILL");
    expect(numbers).toEqual(inOrder(200));
  });

  it("writes the lines of the turn in which the process exits", async () => {
    const { code, stderr, numbers } = await loggedThen("exit", 200);
    expect(code, stderr).toBe(3);
    expect(numbers).toEqual(inOrder(200));
  });

  it("writes the lines of the turn in which an uncaught exception ends the process", async () => {
    const { code, stderr, numbers } = await loggedThen("throw", 200);
    expect(code).toBe(1);
    expect(stderr).toContain("the fixture's uncaught exception");
    expect(numbers).toEqual(inOrder(200));
  });

  it("writes the lines of work handed to atTurnEnd (a call's line) when the process exits or throws in the same turn, or is killed in the next", async () => {
    for (const end of ["exit", "throw"]) {
      const { stderr, numbers } = await loggedThen(end, 200, "after-answer");
      expect(numbers, stderr).toEqual(inOrder(200));
    }
    const killed = await loggedThen("kill", 200, "after-answer");
    expect(killed.numbers, killed.stderr).toEqual(inOrder(200));
  });

  it("runs the rest of the turn's work when one piece throws, then ends the process with that exception", async () => {
    const { code, stderr, numbers } = await loggedThen("none", 200, "after-answer", "100");
    expect(code).toBe(1);
    expect(stderr).toContain("the fixture's failing work 100");
    expect(numbers).toEqual(inOrder(200).filter((line) => line !== 100));
  });

  it("writes a long turn's lines in writes of up to 4 KiB: a kill in that turn loses at most 4 KiB of them", async () => {
    // About 90 bytes a line: 4 KiB are about 45 lines.
    const lines = 20_000;
    const { signal, numbers } = await loggedThen("kill-now", lines);
    expect(signal).toBe("SIGKILL");
    expect(numbers).toEqual(inOrder(numbers.length));
    expect(numbers.length).toBeGreaterThanOrEqual(lines - 50);
    expect(numbers.length).toBeLessThan(lines);
  });

  it("never splits a line when processes share the stdout pipe", async () => {
    const lines = 20_000;
    const { code, stdout, stderr } = await runNode(
      ["--import", tsxLoader, resolve("test/fixtures/logging/log-from-processes.ts")],
      { LINES: String(lines) },
    );
    expect(code, stderr).toBe(0);
    const byChild: Record<string, number[]> = { a: [], b: [] };
    for (const text of stdout.split("\n").filter((line) => line !== "")) {
      const line = JSON.parse(text) as { child: string; line: number };
      byChild[line.child]?.push(line.line);
    }
    expect(byChild.a).toEqual(inOrder(lines));
    expect(byChild.b).toEqual(inOrder(lines));
  });
});
