import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SelfTestReport } from "../../src/admin/self-test.js";
import { main } from "../../src/runtime/node/cli/main.js";
import { capture } from "../support/captured-io.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// The release check of seed 004: one synthetic answer job per provider, end to end, by `promptgate selftest` and by
// GET /readyz?deep=1 with the admin key.

let failing: FakeUpstream;
beforeAll(async () => {
  failing = await startFakeUpstream();
  failing.answerWith((_request, response: ServerResponse) => {
    response.writeHead(500, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: { code: 500, message: "boom", status: "INTERNAL" } }));
  });
});
afterAll(() => failing.close());

describe("promptgate selftest", () => {
  it("passes with --simulated when every provider's job completes with a valid structured answer", async () => {
    const output = capture({ PROMPTGATE_DB: "memory" });
    expect(await main(["selftest", "--timeout", "30", "--simulated"], output.io)).toBe(0);
    const report = JSON.parse(output.stdout()) as SelfTestReport;
    expect(report.pass).toBe(true);
    expect(report.providers.map((provider) => [provider.provider, provider.state, provider.pass])).toEqual([
      ["openai", "completed", true],
      ["gemini", "completed", true],
      ["anthropic", "completed", true],
      ["openai-compatible", "completed", true],
    ]);
  }, 60_000);

  it("fails every provider the simulated one answered without --simulated: it checked no provider", async () => {
    const output = capture({ PROMPTGATE_DB: "memory" });
    expect(await main(["selftest", "--timeout", "30"], output.io)).toBe(1);
    const report = JSON.parse(output.stdout()) as SelfTestReport;
    expect(report.pass).toBe(false);
    expect(report.providers.map((provider) => [provider.provider, provider.upstream, provider.problem])).toEqual([
      ["openai", "simulated", "simulated"],
      ["gemini", "simulated", "simulated"],
      ["anthropic", "simulated", "simulated"],
      ["openai-compatible", "simulated", "simulated"],
    ]);
  }, 60_000);

  it("fails, naming the provider and its class, when one provider's job fails", async () => {
    const output = capture({
      PROMPTGATE_DB: "memory",
      PROMPTGATE_UPSTREAM_GEMINI: `${failing.origin}/gemini`,
      GEMINI_API_KEY: "gemini-key",
      // The other three stay simulated (no test calls a public upstream); they pass with --simulated.
      PROMPTGATE_SIMULATED: "on",
    });
    expect(await main(["selftest", "--timeout", "30", "--simulated"], output.io)).toBe(1);
    const report = JSON.parse(output.stdout()) as SelfTestReport;
    expect(report.pass).toBe(false);
    const gemini = report.providers.find((provider) => provider.provider === "gemini");
    expect(gemini).toMatchObject({ pass: false, state: "failed", problem: "upstream", upstream: failing.origin });
    expect(report.providers.filter((provider) => provider.pass)).toHaveLength(3);
    expect(output.stdout()).not.toContain("gemini-key");
  }, 60_000);

  it("refuses a timeout that is not a number of seconds", async () => {
    const output = capture({ PROMPTGATE_DB: "memory" });
    expect(await main(["selftest", "--timeout", "soon"], output.io)).toBe(2);
    expect(output.stderr()).toContain("--timeout");
  });
});

describe("GET /readyz?deep=1", () => {
  let harness: GatewayUnderTest;
  beforeAll(async () => {
    harness = await startGatewayUnderTest({
      PROMPTGATE_ADMIN_KEY: "admin-key",
      PROMPTGATE_UPSTREAM_OPENAI: "simulated",
      PROMPTGATE_UPSTREAM_GEMINI: "simulated",
      PROMPTGATE_UPSTREAM_ANTHROPIC: "simulated",
      PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE: "simulated",
    });
  });
  afterAll(() => harness.close());

  it("runs the release check for the admin key, and stays the plain readiness answer without deep", async () => {
    const plain = await fetch(`${harness.gateway.url}/readyz`);
    expect(await plain.json()).toEqual({ status: "ready" });
    const deep = await fetch(`${harness.gateway.url}/readyz?deep=1&simulated=1`, {
      headers: { authorization: "Bearer admin-key" },
    });
    expect(deep.status).toBe(200);
    const report = (await deep.json()) as SelfTestReport & { status: string };
    expect(report.status).toBe("ready");
    expect(report.providers.every((provider) => provider.pass)).toBe(true);
  }, 60_000);

  it("fails the release check where the simulated provider answered, unless simulated is asked for", async () => {
    const deep = await fetch(`${harness.gateway.url}/readyz?deep=1`, {
      headers: { authorization: "Bearer admin-key" },
    });
    expect(deep.status).toBe(503);
    const report = (await deep.json()) as SelfTestReport & { status: string };
    expect(report.status).toBe("failing");
    expect(report.providers.map((provider) => provider.problem)).toEqual(report.providers.map(() => "simulated"));
  }, 60_000);

  it("refuses the deep check without the admin key", async () => {
    const response = await fetch(`${harness.gateway.url}/readyz?deep=1`);
    expect(response.status).toBe(401);
  });
});
