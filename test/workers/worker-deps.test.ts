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
