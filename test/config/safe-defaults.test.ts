import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/config.js";
import { configVariables, unknownVariableWarnings } from "../../src/config-variables.js";
import { mainHelp } from "../../src/runtime/node/cli/main-help.js";
import { openRelayRefusal } from "../../src/runtime/node/open-relay.js";

/** Where each provider's calls go under `environment`: simulated, its URL, or unconfigured. */
function targets(environment: Record<string, string>): Record<string, string> {
  const config = readConfig(environment);
  return Object.fromEntries(
    Object.entries(config.upstreams).map(([name, upstream]) => [
      name,
      upstream.simulated ? "simulated" : (upstream.unavailable ?? upstream.baseUrl),
    ]),
  );
}

describe("which providers are simulated (contract section 11)", () => {
  it("simulates every provider on the first run, when no upstream and no key is set", () => {
    expect(Object.values(targets({}))).toEqual(["simulated", "simulated", "simulated", "simulated"]);
  });

  it("once one provider has a key, sends the others to their public upstreams and leaves openai-compatible unconfigured", () => {
    expect(targets({ OPENAI_API_KEY: "sk-server" })).toEqual({
      openai: "https://api.openai.com/v1",
      gemini: "https://generativelanguage.googleapis.com",
      anthropic: "https://api.anthropic.com",
      "openai-compatible": "PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE",
    });
  });

  it("counts an upstream URL as configuring a provider, and a provider set to simulated as not", () => {
    expect(targets({ PROMPTGATE_UPSTREAM_GEMINI: "http://127.0.0.1:9/gemini" }).openai).toBe(
      "https://api.openai.com/v1",
    );
    expect(targets({ PROMPTGATE_UPSTREAM_GEMINI: "simulated" }).openai).toBe("simulated");
  });

  it("gives openai-compatible with a key but no URL no upstream: it has no public one", () => {
    expect(targets({ OPENAI_COMPATIBLE_API_KEY: "local-key" })["openai-compatible"]).toBe(
      "PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE",
    );
  });

  it("simulates the unconfigured providers with PROMPTGATE_SIMULATED=on, and still one set to simulated", () => {
    expect(
      targets({ GEMINI_API_KEY: "g", PROMPTGATE_SIMULATED: "on", PROMPTGATE_UPSTREAM_OPENAI: "simulated" }),
    ).toEqual({
      openai: "simulated",
      gemini: "https://generativelanguage.googleapis.com",
      anthropic: "simulated",
      "openai-compatible": "simulated",
    });
  });

  it("refuses a PROMPTGATE_SIMULATED that is neither on nor off, naming it", () => {
    expect(() => readConfig({ PROMPTGATE_SIMULATED: "yes" })).toThrow(ConfigError);
    expect(() => readConfig({ PROMPTGATE_SIMULATED: "yes" })).toThrow(/PROMPTGATE_SIMULATED="yes" must be on or off/);
  });
});

describe("the open-relay rule at start-up", () => {
  const beyond = { HOST: "0.0.0.0", PORT: "0", PROMPTGATE_DB: "memory", GEMINI_API_KEY: "g-server" };

  it("refuses to listen beyond loopback in pass-through mode while a server-held key is set, naming the fix", () => {
    const refusal = openRelayRefusal(readConfig(beyond));
    expect(refusal?.message).toBe(
      "HOST=0.0.0.0 listens beyond loopback in pass-through mode while GEMINI_API_KEY is set, so anyone reaching it could call with that key: make gateway keys (PROMPTGATE_KEYS, or named keys with PROMPTGATE_KEY_MODE=keys), set HOST=127.0.0.1, or PROMPTGATE_OPEN_RELAY=true to allow it.",
    );
  });

  it("allows it with PROMPTGATE_OPEN_RELAY=true, with gateway keys, on loopback, or without a server-held key", () => {
    expect(openRelayRefusal(readConfig({ ...beyond, PROMPTGATE_OPEN_RELAY: "true" }))).toBeUndefined();
    expect(openRelayRefusal(readConfig({ ...beyond, PROMPTGATE_KEYS: "gk-one" }))).toBeUndefined();
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
      expect(openRelayRefusal(readConfig({ ...beyond, HOST: host }))).toBeUndefined();
    expect(openRelayRefusal(readConfig({ HOST: "0.0.0.0" }))).toBeUndefined();
  });

  it("lets pass-through calls use a server-held key only with PROMPTGATE_OPEN_RELAY=true where there is no loopback", () => {
    expect(readConfig({}).passThroughServerKeys).toBe(true);
    expect(readConfig({}, { beyondLoopback: true }).passThroughServerKeys).toBe(false);
    expect(readConfig({ PROMPTGATE_OPEN_RELAY: "true" }, { beyondLoopback: true }).passThroughServerKeys).toBe(true);
  });
});

describe("an unknown PROMPTGATE_* variable", () => {
  it("is a warning naming the closest known variable", () => {
    expect(unknownVariableWarnings({ PROMPTGATE_UPSTREAM_GEMENI: "x", PROMPTGATE_KEY: "k", HOME: "/root" })).toEqual([
      "promptgate: PROMPTGATE_KEY is no variable promptgate reads, so it has no effect; did you mean PROMPTGATE_KEYS?",
      "promptgate: PROMPTGATE_UPSTREAM_GEMENI is no variable promptgate reads, so it has no effect; did you mean PROMPTGATE_UPSTREAM_GEMINI?",
    ]);
  });

  it("names no variable when none is close", () => {
    expect(unknownVariableWarnings({ PROMPTGATE_SOMETHING_ELSE_ENTIRELY: "1" })).toEqual([
      "promptgate: PROMPTGATE_SOMETHING_ELSE_ENTIRELY is no variable promptgate reads, so it has no effect",
    ]);
  });

  it("is judged against the one table that --help lists", () => {
    for (const { name } of configVariables) expect(mainHelp).toContain(name);
    expect(unknownVariableWarnings(Object.fromEntries(configVariables.map(({ name }) => [name, "x"])))).toEqual([]);
  });
});
