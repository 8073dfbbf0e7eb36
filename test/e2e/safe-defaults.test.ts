import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";

// Contract section 11: the simulated provider answers only on the first run (nothing configured), with
// PROMPTGATE_SIMULATED=on, or for a provider set to "simulated"; once a provider is configured, a call for another
// that needs its missing key is 403 account_selection naming the variable, never simulated.

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

async function gatewayWith(environment: Record<string, string>): Promise<NodeGateway> {
  return startNodeGateway(
    { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", ...environment },
    { logDestination: { write: () => {} } },
  );
}

/** Only OpenAI configured: its upstream is the fake one, with a server-held key. */
function onlyOpenAI(): Record<string, string> {
  return { PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`, OPENAI_API_KEY: "sk-server-openai" };
}

function geminiCall(url: string): Promise<Response> {
  return fetch(`${url}/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
  });
}

function anthropicCall(url: string): Promise<Response> {
  return fetch(`${url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "hello" }] }),
  });
}

describe("with only OpenAI configured", () => {
  let gateway: NodeGateway;
  let client: OpenAI;
  beforeAll(async () => {
    gateway = await gatewayWith(onlyOpenAI());
    client = new OpenAI({ apiKey: "sk-client", baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it("refuses a Gemini model routed through the openai SDK with 403 account_selection naming GEMINI_API_KEY", async () => {
    upstream.received.length = 0;
    const error = await client.chat.completions
      .create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "hello" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).toContain("GEMINI_API_KEY");
    expect(upstream.received).toHaveLength(0);
  });

  it("refuses an openai-compatible model, which has no public upstream, naming PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE", async () => {
    const error = await client.chat.completions
      .create({ model: "local", messages: [{ role: "user", content: "hello" }] })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).toContain(
      "PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE",
    );
  });

  it("refuses native Gemini and Anthropic calls without a credential with 403 naming the key variable, never simulated", async () => {
    for (const [call, variable] of [
      [geminiCall, "GEMINI_API_KEY"],
      [anthropicCall, "ANTHROPIC_API_KEY"],
    ] as const) {
      const response = await call(gateway.url);
      expect(response.status).toBe(403);
      expect(response.headers.get("x-promptgate-simulated")).toBeNull();
      const text = await response.text();
      expect(text).toContain("account_selection");
      expect(text).toContain(variable);
    }
  });

  it("still serves OpenAI itself from its configured upstream", async () => {
    upstream.received.length = 0;
    const answer = await client.chat.completions.create({
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(answer.choices[0]?.message.content).toBeTypeOf("string");
    expect(upstream.received).toHaveLength(1);
  });
});

describe("with only Gemini configured", () => {
  it("refuses a native OpenAI call without a credential with 403 naming OPENAI_API_KEY, sending nothing", async () => {
    const gateway = await gatewayWith({
      PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
      GEMINI_API_KEY: "server-gemini",
    });
    try {
      upstream.received.length = 0;
      const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(response.status).toBe(403);
      const text = await response.text();
      expect(text).toContain("account_selection");
      expect(text).toContain("OPENAI_API_KEY");
      expect(upstream.received).toHaveLength(0);
      // A model the table routes to Gemini still goes there, with Gemini's server-held key.
      const routed = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(routed.status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});

describe("the simulated provider", () => {
  it("answers every provider on the first run, when nothing is configured", async () => {
    const gateway = await gatewayWith({});
    try {
      const gemini = await geminiCall(gateway.url);
      expect(gemini.status).toBe(200);
      expect(gemini.headers.get("x-promptgate-simulated")).toBe("true");
      const anthropic = await anthropicCall(gateway.url);
      expect(anthropic.status).toBe(200);
      expect(anthropic.headers.get("x-promptgate-simulated")).toBe("true");
    } finally {
      await gateway.close();
    }
  });

  it("answers the unconfigured providers with PROMPTGATE_SIMULATED=on, while OpenAI keeps its upstream", async () => {
    const gateway = await gatewayWith({ ...onlyOpenAI(), PROMPTGATE_SIMULATED: "on" });
    try {
      expect(gateway.config.upstreams.openai?.simulated).toBe(false);
      const gemini = await geminiCall(gateway.url);
      expect(gemini.status).toBe(200);
      expect(gemini.headers.get("x-promptgate-simulated")).toBe("true");
      const client = new OpenAI({ apiKey: "sk-client", baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });
      const routed = await client.chat.completions
        .create({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "hello" }] })
        .withResponse();
      expect(routed.response.headers.get("x-promptgate-simulated")).toBe("true");
    } finally {
      await gateway.close();
    }
  });
});
