import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";

describe("the worker's dependencies", () => {
  it("take the configuration from the [vars] and secrets of env", async () => {
    const deps = await createIsolateDeps({ ...env, PROMPTGATE_MAX_BODY_BYTES: "2048", OPENAI_API_KEY: "sk-server" });
    expect(deps.config.maxBodyBytes).toBe(2048);
    expect(deps.config.upstreams.openai).toMatchObject({ simulated: false, label: "https://api.openai.com" });
    expect(deps.config.upstreams.anthropic).toMatchObject({ simulated: true });
  });

  it("refuse a default policy that no bundled policy file names, naming the variable only", async () => {
    const failure = await createIsolateDeps({ ...env, PROMPTGATE_DEFAULT_POLICY: "no.such.policy" }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).message).not.toContain("no.such.policy");
  });
});

describe("the worker's call log", () => {
  it("writes one JSON line per call with the call's identifiers and sizes, no credential field, and nothing at silent", async () => {
    const { consoleCallLog } = await import("../../src/runtime/workers/console-call-log.js");
    const written: string[] = [];
    const original = console.log;
    console.log = (text: string) => written.push(text);
    try {
      // The two credential fields stand for a mistake a later change could make; the guard keeps them out.
      const line = {
        ref: "ref_0123456789abcdef",
        policy: "default@000000000000",
        decision: "sent",
        duration_ms: 3,
        Authorization: "Bearer sk-worker-1",
        upstream: { key: "sk-worker-2", label: "openai" },
      } as unknown as Parameters<NonNullable<ReturnType<typeof consoleCallLog>>>[0];
      consoleCallLog("info")?.(line);
      expect(consoleCallLog("silent")).toBeUndefined();
    } finally {
      console.log = original;
    }
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0] ?? "")).toMatchObject({
      ref: "ref_0123456789abcdef",
      service: "promptgate",
      upstream: { label: "openai" },
    });
    expect(written[0]).not.toContain("sk-worker");
  });
});
