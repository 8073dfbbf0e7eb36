import { describe, expect, it } from "vitest";
import { runGateway } from "./gateway-run.js";

/** Makes one call to a running gateway on the simulated provider. */
async function oneCall(url: string): Promise<void> {
  const response = await fetch(`${url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer simulated" },
    body: JSON.stringify({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "Say hello." }] }),
  });
  await response.arrayBuffer();
}

function isJson(line: string): boolean {
  try {
    return typeof JSON.parse(line) === "object";
  } catch {
    return false;
  }
}

describe("a gateway process's stdout", { timeout: 60_000 }, () => {
  it("carries only JSON lines when it is no terminal: the start-up line and each call's", async () => {
    const run = await runGateway({ PROMPTGATE_DB: "memory" }, { whileListening: oneCall });
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    expect(lines.length, run.stdout).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(isJson(line), line).toBe(true);
    expect(lines.map((line) => JSON.parse(line).msg)).toContain("call");
  });

  it("carries lines for a person with PROMPTGATE_LOG_FORMAT=pretty", async () => {
    const run = await runGateway(
      { PROMPTGATE_DB: "memory", PROMPTGATE_LOG_FORMAT: "pretty" },
      { whileListening: oneCall },
    );
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    expect(lines.length, run.stdout).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(isJson(line), line).toBe(false);
    // The start-up line names its process (pino-pretty shows a `pid` after the level), so workers can be told apart.
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): promptgate listening on http:\/\//);
    expect(lines.some((line) => / INFO: call \{/.test(line))).toBe(true);
  });
});
