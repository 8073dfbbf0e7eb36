import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

const gatewayKeys = ["gw-key-alpha-1234567890", "gw-key-beta-0987654321"];
const serverKeys = {
  OPENAI_API_KEY: "sk-server-openai-key-000111",
  GEMINI_API_KEY: "AIzaServerGeminiKey000222",
  ANTHROPIC_API_KEY: "sk-ant-server-anthropic-333",
};
const adminKey = "keys-admin-key";
const wrongKey = "gw-key-wrong-5555555555";

/** Everything the client and the logs saw must be free of every key. */
const allSecrets = [...gatewayKeys, ...Object.values(serverKeys), wrongKey];

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_KEYS: ` ${gatewayKeys.join(" , ")} `,
    PROMPTGATE_ADMIN_KEY: adminKey,
    ...serverKeys,
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

function openai(apiKey: string): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 2 });
}

function gemini(apiKey: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${harness.gateway.url}/gemini` } });
}

function anthropic(options: { apiKey?: string | null; authToken?: string }): Anthropic {
  return new Anthropic({ apiKey: null, ...options, baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 2 });
}

function expectNoSecret(text: string): void {
  for (const secret of allSecrets) expect(text).not.toContain(secret);
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to be refused");
    },
    (error: unknown) => error,
  );
}

const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };
const message = { model: "claude-test", max_tokens: 16, messages: [{ role: "user" as const, content: "hello" }] };

describe("gateway-key mode (PROMPTGATE_KEYS set)", () => {
  it("takes a gateway key as the openai SDK's bearer key and sends the server-held key upstream", async () => {
    const completion = await openai(gatewayKeys[1] as string).chat.completions.create(chat);
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const sent = harness.upstream.received[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${serverKeys.OPENAI_API_KEY}`);
    expect(JSON.stringify(sent?.headers)).not.toContain(gatewayKeys[1]);
  });

  it("takes a gateway key as the Gemini SDK's x-goog-api-key and replaces it upstream", async () => {
    const result = await gemini(gatewayKeys[0] as string).models.generateContent({
      model: "gemini-test",
      contents: "hi",
    });
    expect(result.text).toBeTruthy();
    const sent = harness.upstream.received[0];
    expect(sent?.headers["x-goog-api-key"]).toBe(serverKeys.GEMINI_API_KEY);
    expect(JSON.stringify(sent?.headers)).not.toContain(gatewayKeys[0]);
  });

  it("takes a gateway key in Gemini's ?key= and keeps it out of the upstream URL", async () => {
    const response = await fetch(
      `${harness.gateway.url}/gemini/v1beta/models/gemini-test:generateContent?key=${gatewayKeys[0]}&alt=json`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      },
    );
    expect(response.status).toBe(200);
    const sent = harness.upstream.received[0];
    expect(sent?.url).toBe("/gemini/v1beta/models/gemini-test:generateContent?alt=json");
    expect(sent?.headers["x-goog-api-key"]).toBe(serverKeys.GEMINI_API_KEY);
  });

  it("takes a gateway key as Anthropic's x-api-key or as its bearer token", async () => {
    await anthropic({ apiKey: gatewayKeys[0] as string }).messages.create(message);
    await anthropic({ authToken: gatewayKeys[1] as string }).messages.create(message);
    expect(harness.upstream.received).toHaveLength(2);
    for (const sent of harness.upstream.received) {
      expect(sent.headers["x-api-key"]).toBe(serverKeys.ANTHROPIC_API_KEY);
      expect(sent.headers.authorization).toBeUndefined();
    }
  });

  it("refuses a wrong key with the openai SDK's AuthenticationError, once, echoing nothing", async () => {
    const linesBefore = harness.logs.length;
    const error = await rejectionOf(openai(wrongKey).chat.completions.create(chat).withResponse());
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    const authentication = error as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(authentication.status).toBe(401);
    expect(authentication.code).toBe("authentication");
    expect(authentication.error).toMatchObject({
      message: "A valid gateway key is required.",
      promptgate: { code: "authentication", retryable: false },
    });
    expect(authentication.headers?.get("x-should-retry")).toBe("false");
    expectNoSecret(JSON.stringify(authentication.error));
    // Not retried: one call, one log line; nothing went upstream.
    expect(harness.logs.length - linesBefore).toBe(1);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a request without a key with 401 authentication", async () => {
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "authentication", message: "A valid gateway key is required." });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a wrong key with the Gemini SDK's ApiError 401 and the Anthropic SDK's AuthenticationError", async () => {
    const geminiError = await rejectionOf(
      gemini(wrongKey).models.generateContent({ model: "gemini-test", contents: "hi" }),
    );
    expect(geminiError).toBeInstanceOf(ApiError);
    expect((geminiError as ApiError).status).toBe(401);
    expect((geminiError as ApiError).message).toContain("UNAUTHENTICATED");
    expectNoSecret((geminiError as ApiError).message);

    const anthropicError = await rejectionOf(anthropic({ apiKey: wrongKey }).messages.create(message));
    expect(anthropicError).toBeInstanceOf(Anthropic.AuthenticationError);
    expectNoSecret(JSON.stringify((anthropicError as InstanceType<typeof Anthropic.AuthenticationError>).error));
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a provider key presented instead of a gateway key", async () => {
    const response = await fetch(`${harness.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": serverKeys.ANTHROPIC_API_KEY },
      body: JSON.stringify(message),
    });
    expect(response.status).toBe(401);
    expectNoSecret(await response.text());
  });

  it("keeps the server-held key out of the client's answer and the record when the provider echoes it", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${serverKeys.OPENAI_API_KEY}.`,
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
      );
    });
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gatewayKeys[0]}` },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text).error).toMatchObject({
      code: "authentication",
      message: "The provider did not accept the credentials.",
    });
    expectNoSecret(text);
    expectNoSecret(JSON.stringify([...response.headers]));
    const record = await fetch(
      `${harness.gateway.url}/promptgate/admin/calls/${response.headers.get("x-promptgate-ref")}`,
      { headers: { authorization: `Bearer ${adminKey}` } },
    ).then((answer) => answer.json() as Promise<Record<string, unknown>>);
    expect(record).toMatchObject({
      error: "authentication",
      upstream_status: 401,
      upstream_error: { class: "authentication", status: 401, text: expect.stringContaining("Incorrect API key") },
    });
    expectNoSecret(JSON.stringify(record));
  });

  it("writes no key into any log line", () => {
    expect(harness.logs.length).toBeGreaterThan(0);
    for (const line of harness.logs) expectNoSecret(line);
  });
});

describe("gateway-key mode for a surface without a server-held key", () => {
  let bare: GatewayUnderTest;
  beforeAll(async () => {
    bare = await startGatewayUnderTest({ PROMPTGATE_KEYS: gatewayKeys[0] as string });
  });
  afterAll(() => bare.close());

  it("answers 403 account_selection with a fixed message, sending nothing upstream", async () => {
    const client = new OpenAI({ apiKey: gatewayKeys[0], baseURL: `${bare.gateway.url}/openai/v1`, maxRetries: 2 });
    const error = await rejectionOf(client.chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({
      code: "account_selection",
      message: "No provider key is configured for this surface (OPENAI_API_KEY).",
      promptgate: { retryable: false },
    });
    expect(bare.upstream.received).toHaveLength(0);
  });

  it("still refuses a wrong key first with 401", async () => {
    const client = new OpenAI({ apiKey: wrongKey, baseURL: `${bare.gateway.url}/openai/v1`, maxRetries: 0 });
    expect(await rejectionOf(client.chat.completions.create(chat))).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe("pass-through mode (no PROMPTGATE_KEYS)", () => {
  let open: GatewayUnderTest;
  beforeAll(async () => {
    open = await startGatewayUnderTest({ ANTHROPIC_API_KEY: serverKeys.ANTHROPIC_API_KEY });
  });
  afterAll(() => open.close());
  beforeEach(() => {
    open.upstream.received.length = 0;
  });

  it("forwards the client's own credential, in whichever header the SDK sends it", async () => {
    const client = new Anthropic({ apiKey: "client-own-key", baseURL: `${open.gateway.url}/anthropic`, maxRetries: 0 });
    await client.messages.create(message);
    const headers = open.upstream.received[0]?.headers ?? {};
    const forwarded = headers["x-api-key"] ?? headers.authorization?.replace(/^Bearer /, "");
    expect(forwarded).toBe("client-own-key");
    expect(JSON.stringify(headers)).not.toContain(serverKeys.ANTHROPIC_API_KEY);
  });

  it("uses the server-held key when the client sends none", async () => {
    const response = await fetch(`${open.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(message),
    });
    expect(response.status).toBe(200);
    expect(open.upstream.received[0]?.headers["x-api-key"]).toBe(serverKeys.ANTHROPIC_API_KEY);
  });
});
