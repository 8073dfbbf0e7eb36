import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { runNode, tsxLoader } from "../support/node-run.js";

const entry = resolve("src/runtime/node/main.ts");
const preload = pathToFileURL(resolve("test/fixtures/signals/sigterm-at.mjs")).href;

/** Runs the gateway with SIGTERM sent to it at `moment` (see the preload) and reports how it ended. */
function runSignalled(moment: "listening" | "start-up") {
  return runNode(["--import", preload, "--import", tsxLoader, entry], {
    PORT: "0",
    HOST: "127.0.0.1",
    PROMPTGATE_DB: "memory",
    SIGTERM_AT: moment,
  });
}

describe("a stop signal at start-up", { timeout: 60_000 }, () => {
  it("sent as the start-up line is written, drains and stops the gateway instead of killing it", async () => {
    const outcome = await runSignalled("listening");
    expect(outcome.signal, outcome.stderr).toBeNull();
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toContain('"event":"listening"');
    expect(outcome.stderr).toContain("promptgate stopped on SIGTERM");
  });

  it("sent while the gateway starts, stops it once it is up", async () => {
    const outcome = await runSignalled("start-up");
    // The gateway listens for it from before it starts, so it came before the start-up line.
    expect(outcome.stderr).toContain("sigterm-at: sent before the start-up line");
    expect(outcome.signal, outcome.stderr).toBeNull();
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toContain('"event":"listening"');
    expect(outcome.stderr).toContain("promptgate stopped on SIGTERM");
  });
});
