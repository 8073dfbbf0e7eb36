import { ApiError, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Regressions of an adversarial review that got about 100,000 characters through
// investigation.bounded (limit 20,000) on the Gemini surface. Each route must be refused before
// anything reaches the provider; where a measuring policy counts it instead, the size must show in
// x-promptgate-prompt-size.

let harness: GatewayUnderTest;
/** A stock client on investigation.bounded. */
let bounded: GoogleGenAI;
/** A stock client on the default policy (no prefix). */
let unpinned: GoogleGenAI;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  bounded = new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: boundedBaseUrl() } });
  unpinned = new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: unpinnedBaseUrl() } });
});

const boundedBaseUrl = () => `${harness.gateway.url}/policies/investigation.bounded/gemini`;
const unpinnedBaseUrl = () => `${harness.gateway.url}/gemini`;

/** 100,000 characters, 100,000 code points: five times the investigation.bounded limit. */
const big = "x".repeat(100_000);

type PromptSize = Record<string, number | boolean | string>;

/** Gemini's error shape as the gateway renders it. */
interface GeminiErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details: { reason?: string }[];
    promptgate: { code: string; retryable: boolean; prompt_size?: PromptSize };
  };
}

/** The prompt_size of an SDK result, from the header @google/genai keeps on `sdkHttpResponse`. */
function sizeOf(result: { sdkHttpResponse?: { headers?: Record<string, string> } }): PromptSize {
  return JSON.parse(result.sdkHttpResponse?.headers?.["x-promptgate-prompt-size"] ?? "null");
}

/** A raw request to the gateway, for what no SDK sends (a snake_case null beside a part, duplicate keys). */
function send(baseUrl: string, method: string, path: string, body?: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-goog-api-key": "client-key" },
    ...(body === undefined ? {} : { body }),
  });
}

/** Asserts a raw response is a 400 refusal with `code` in Gemini's native shape, and returns its body. */
async function expectRefused(response: Response, code: string): Promise<GeminiErrorBody> {
  expect(response.status).toBe(400);
  expect(response.headers.get("x-should-retry")).toBe("false");
  const body = (await response.json()) as GeminiErrorBody;
  expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  expect(body.error.details.map((detail) => detail.reason)).toContain(code);
  expect(body.error.promptgate).toMatchObject({ code, retryable: false });
  return body;
}

/** The ApiError an SDK call is refused with: 400 with `code` in Gemini's native shape; returns its body. */
async function sdkRefusalOf(call: Promise<unknown>, code: string): Promise<GeminiErrorBody> {
  const caught = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(ApiError);
  const error = caught as ApiError;
  expect(error.status).toBe(400);
  // @google/genai keeps no headers on ApiError; its message is the JSON error body.
  const body = JSON.parse(error.message) as GeminiErrorBody;
  expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  expect(body.error.details.map((detail) => detail.reason)).toContain(code);
  expect(body.error.promptgate).toMatchObject({ code, retryable: false });
  return body;
}

/**
 * Parts that carry 100,000 characters beside the snake_case spelling of a media member set to
 * null: a null member is absent, so the part is what its other member says.
 */
const partsBesideNull: Array<[string, Record<string, unknown>]> = [
  ["inline_data: null beside a functionCall", { inline_data: null, functionCall: { name: "f", args: { blob: big } } }],
  [
    "file_data: null beside a functionResponse",
    { file_data: null, functionResponse: { name: "f", response: { result: big } } },
  ],
  [
    "inline_data: null beside an executableCode",
    { inline_data: null, executableCode: { language: "PYTHON", code: big } },
  ],
  [
    "file_data: null beside a codeExecutionResult",
    { file_data: null, codeExecutionResult: { outcome: "OUTCOME_OK", output: big } },
  ],
];

function generateBody(part: Record<string, unknown>): string {
  return JSON.stringify({
    contents: [
      { role: "user", parts: [{ text: "Run it." }] },
      { role: "model", parts: [part] },
      { role: "user", parts: [{ text: "Go on." }] },
    ],
  });
}

function cacheBody(part: Record<string, unknown>): string {
  return JSON.stringify({
    model: "models/gemini-test",
    ttl: "300s",
    contents: [
      { role: "user", parts: [{ text: "Run it." }] },
      { role: "model", parts: [part] },
    ],
  });
}

describe("Gemini parts with a snake_case null beside them (raw JSON)", () => {
  it.each(partsBesideNull)(
    "refuses a generateContent part with %s carrying 100,000 characters under investigation.bounded, sending nothing",
    async (_what, part) => {
      const response = await send(
        boundedBaseUrl(),
        "POST",
        "/v1beta/models/gemini-test:generateContent",
        generateBody(part),
      );
      const body = await expectRefused(response, "INVESTIGATION_PROMPT_LIMIT");
      expect(body.error.promptgate.prompt_size?.message_chars).toBeGreaterThanOrEqual(100_000);
      expect(harness.upstream.received).toHaveLength(0);
    },
  );

  it.each(partsBesideNull)(
    "counts a generateContent part with %s as message_chars under the default policy",
    async (_what, part) => {
      const response = await send(
        unpinnedBaseUrl(),
        "POST",
        "/v1beta/models/gemini-test:generateContent",
        generateBody(part),
      );
      const size = JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null") as PromptSize;
      expect(size.message_chars).toBeGreaterThanOrEqual(100_000);
      expect(response.status).toBe(200);
    },
  );

  it.each(partsBesideNull)(
    "refuses a cachedContents create whose part has %s carrying 100,000 characters under investigation.bounded, sending nothing",
    async (_what, part) => {
      const response = await send(boundedBaseUrl(), "POST", "/v1beta/cachedContents", cacheBody(part));
      const body = await expectRefused(response, "INVESTIGATION_PROMPT_LIMIT");
      expect(body.error.promptgate.prompt_size?.message_chars).toBeGreaterThanOrEqual(100_000);
      expect(harness.upstream.received).toHaveLength(0);
    },
  );

  it.each(partsBesideNull)(
    "counts a cachedContents create whose part has %s as message_chars under the default policy",
    async (_what, part) => {
      const response = await send(unpinnedBaseUrl(), "POST", "/v1beta/cachedContents", cacheBody(part));
      const size = JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null") as PromptSize;
      expect(size.message_chars).toBeGreaterThanOrEqual(100_000);
      expect(response.status).toBe(200);
    },
  );
});

describe("Gemini text sent as media", () => {
  const textAsMedia = {
    model: "gemini-test",
    contents: [
      {
        role: "user",
        parts: [
          { text: "Summarize the notes." },
          { inlineData: { mimeType: "text/plain", data: Buffer.from(big, "utf8").toString("base64") } },
        ],
      },
    ],
  };

  it("refuses inlineData of text/plain carrying 100,000 characters under investigation.bounded, sending nothing", async () => {
    const body = await sdkRefusalOf(bounded.models.generateContent(textAsMedia), "INVESTIGATION_PROMPT_LIMIT");
    expect(body.error.promptgate.prompt_size).toMatchObject({ media_parts: 0 });
    expect(body.error.promptgate.prompt_size?.message_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts inlineData of text/plain as its decoded characters under the default policy", async () => {
    const result = await unpinned.models.generateContent(textAsMedia);
    expect(sizeOf(result)).toMatchObject({ media_parts: 0, message_chars: "Summarize the notes.".length + 100_000 });
  });
});

describe("duplicate JSON keys (raw HTTP, as no SDK sends them)", () => {
  const large = JSON.stringify([{ role: "user", parts: [{ text: big }] }]);
  const small = JSON.stringify([{ role: "user", parts: [{ text: "hi" }] }]);
  const bodies: Array<[string, string, string]> = [
    ["a top-level contents", "/v1beta/models/gemini-test:generateContent", `{"contents":${large},"contents":${small}}`],
    [
      "the parts of a content",
      "/v1beta/models/gemini-test:generateContent",
      `{"contents":[{"role":"user","parts":[{"text":${JSON.stringify(big)}}],"parts":[{"text":"hi"}]}]}`,
    ],
    [
      "the text of a part",
      "/v1beta/models/gemini-test:generateContent",
      `{"contents":[{"role":"user","parts":[{"text":${JSON.stringify(big)},"text":"hi"}]}]}`,
    ],
    [
      "the contents of a cachedContents create",
      "/v1beta/cachedContents",
      `{"model":"models/gemini-test","contents":${large},"contents":${small}}`,
    ],
  ];

  it.each(bodies)(
    "refuses a body with a duplicate key in %s as INVALID_REQUEST, sending nothing",
    async (_where, path, text) => {
      await expectRefused(await send(boundedBaseUrl(), "POST", path, text), "INVALID_REQUEST");
      expect(harness.upstream.received).toHaveLength(0);
    },
  );
});

describe("Gemini paths that would traverse on the upstream", () => {
  const fiftyKilobytes = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x".repeat(50_000) }] }] });
  const requests: Array<[string, string, string | undefined]> = [
    ["GET", "/v1beta/models/x%5C..%5C..%5Cfiles", undefined],
    ["POST", "/v1beta/models/x%5C..%5C..%5Cfiles", "{}"],
    ["PATCH", "/v1beta/models/x%5C..%5Cg:generateContent", fiftyKilobytes],
  ];

  const cases = requests.flatMap(([method, path, body]) => [
    ["investigation.bounded", method, path, body] as const,
    ["the default policy", method, path, body] as const,
  ]);

  it.each(cases)("answers under %s %s %s with 404 and sends nothing upstream", async (policy, method, path, body) => {
    const baseUrl = policy === "the default policy" ? unpinnedBaseUrl() : boundedBaseUrl();
    const response = await send(baseUrl, method, path, body);
    expect(response.status).toBe(404);
    const error = (await response.json()) as GeminiErrorBody;
    expect(error.error).toMatchObject({ code: 404, status: "NOT_FOUND" });
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("an ordinary call under investigation.bounded", () => {
  const functionDeclarations = [
    {
      name: "lookup_incident",
      description: "Looks an incident up by its id.",
      parametersJsonSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  ];
  // Gemini takes this schema natively as it is, so the nested projection sends it unchanged.
  const schema = {
    type: "object",
    properties: { cause: { type: "string" }, confidence: { type: "string", enum: ["low", "high"] } },
    required: ["cause", "confidence"],
  };

  it("accepts a realistic generateContent and its prompt_size adds up", async () => {
    const result = await bounded.models.generateContent({
      model: "gemini-test",
      contents: [
        { role: "user", parts: [{ text: "The checkout API times out since 09:40." }] },
        { role: "model", parts: [{ functionCall: { name: "lookup_incident", args: { id: "INC-7" } } }] },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "lookup_incident", response: { summary: "INC-7: database pool exhausted." } } },
            { text: "What is the likely cause?" },
          ],
        },
      ],
      config: {
        systemInstruction: "You triage incidents. Answer in JSON.",
        temperature: 0.2,
        tools: [{ functionDeclarations }],
        responseMimeType: "application/json",
        responseJsonSchema: schema,
      },
    });
    expect(harness.upstream.received).toHaveLength(1);
    const size = sizeOf(result);
    expect(size).toMatchObject({
      check: "preflight",
      system_chars: "You triage incidents. Answer in JSON.".length,
      tool_chars: JSON.stringify({ functionDeclarations }).length,
      schema_chars: JSON.stringify(schema).length,
      cache_prefix_chars: 0,
      media_parts: 0,
      over_target: false,
    });
    expect(size.message_chars).toBeGreaterThan(0);
    const parts = ["system_chars", "message_chars", "tool_chars", "schema_chars", "other_chars", "cache_prefix_chars"];
    expect(size.total_chars).toBe(parts.reduce((total, part) => total + (size[part] as number), 0));
    expect(size.conservative_total_chars).toBe((size.total_chars as number) + 1500);
  });
});
