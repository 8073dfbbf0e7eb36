import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Regressions of an adversarial review that got about 100,000 characters through
// investigation.bounded (limit 20,000) on the Anthropic surface. Each route must be refused before
// anything reaches the provider; where a measuring policy counts it instead, the size must show in
// x-promptgate-prompt-size.

let harness: GatewayUnderTest;
/** A stock client on investigation.bounded. */
let bounded: Anthropic;
/** A stock client on the default policy (no prefix). */
let unpinned: Anthropic;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  bounded = new Anthropic({ apiKey: "client-key", baseURL: boundedBaseUrl(), maxRetries: 0 });
  unpinned = new Anthropic({ apiKey: "client-key", baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 0 });
});

const boundedBaseUrl = () => `${harness.gateway.url}/policies/investigation.bounded/anthropic`;

/** 100,000 characters, 100,000 code points: five times the investigation.bounded limit. */
const big = "x".repeat(100_000);

/** The smallest well-formed PDF, base64: binary media the model reads as pages. */
const pdfBase64 = Buffer.from(
  "%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
).toString("base64");

type PromptSize = Record<string, number | boolean | string>;

function sizeHeader(headers: Headers | undefined): PromptSize {
  return JSON.parse(headers?.get("x-promptgate-prompt-size") ?? "null");
}

/** The body of an Anthropic error as the gateway renders it. */
interface GatewayErrorBody {
  type: string;
  error: {
    type: string;
    message: string;
    code: string;
    promptgate: { code: string; retryable: boolean; prompt_size?: PromptSize };
  };
}

type ApiError = InstanceType<typeof Anthropic.APIError>;

/** The BadRequestError a call is refused with, carrying `code` in the native shape. */
async function refusalOf(call: Promise<unknown>, code: string): Promise<ApiError> {
  const caught = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(Anthropic.BadRequestError);
  const error = caught as ApiError;
  expect(error.status).toBe(400);
  expect(error.headers?.get("x-should-retry")).toBe("false");
  const body = bodyOf(error);
  expect(body.type).toBe("error");
  expect(body.error).toMatchObject({ type: "invalid_request_error", code });
  expect(body.error.promptgate).toMatchObject({ code, retryable: false });
  return error;
}

function bodyOf(error: ApiError): GatewayErrorBody {
  return error.error as GatewayErrorBody;
}

/** The prompt_size a window refusal carries, in its body and in its header alike. */
function refusedSize(error: ApiError): PromptSize {
  const size = bodyOf(error).error.promptgate.prompt_size;
  expect(size).toBeDefined();
  expect(sizeHeader(error.headers)).toMatchObject({ check: "preflight" });
  return size as PromptSize;
}

/** A raw POST of a JSON text to the gateway, for what no SDK sends (duplicate keys). */
function postRaw(text: string): Promise<Response> {
  return fetch(`${boundedBaseUrl()}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "client-key", "anthropic-version": "2023-06-01" },
    body: text,
  });
}

type DocumentSource = Anthropic.DocumentBlockParam["source"];

const sources: Record<string, DocumentSource> = {
  "a base64 PDF": { type: "base64", media_type: "application/pdf", data: pdfBase64 },
  "a PDF by URL": { type: "url", url: "https://example.com/report.pdf" },
};

/** The user turns that carry a document whose `field` holds 100,000 characters, directly or in a tool result. */
function documentTurns(
  source: DocumentSource,
  field: "title" | "context",
  inToolResult: boolean,
): Anthropic.MessageParam[] {
  const document: Anthropic.DocumentBlockParam = { type: "document", source, [field]: big };
  if (!inToolResult) {
    return [{ role: "user", content: [document, { type: "text", text: "Summarize the report." }] }];
  }
  return [
    { role: "user", content: "Fetch the report." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "fetch_report", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [document] }] },
  ];
}

const documentCases: Array<[string, string, "title" | "context", boolean]> = [];
for (const [sourceName] of Object.entries(sources)) {
  for (const field of ["title", "context"] as const) {
    documentCases.push([sourceName, "a message", field, false], [sourceName, "a tool_result", field, true]);
  }
}

describe("Anthropic documents whose title or context carries the text", () => {
  it.each(documentCases)(
    "refuses %s document in %s whose %s carries 100,000 characters under investigation.bounded, sending nothing",
    async (sourceName, _where, field, inToolResult) => {
      const error = await refusalOf(
        bounded.messages.create({
          model: "claude-test",
          max_tokens: 64,
          messages: documentTurns(sources[sourceName]!, field, inToolResult),
        }),
        "INVESTIGATION_PROMPT_LIMIT",
      );
      expect(refusedSize(error).message_chars).toBeGreaterThanOrEqual(100_000);
      expect(harness.upstream.received).toHaveLength(0);
    },
  );

  it.each(documentCases)(
    "counts %s document in %s whose %s carries 100,000 characters as message_chars and one media part under the default policy",
    async (sourceName, _where, field, inToolResult) => {
      const { response } = await unpinned.messages
        .create({
          model: "claude-test",
          max_tokens: 64,
          messages: documentTurns(sources[sourceName]!, field, inToolResult),
        })
        .withResponse();
      const size = sizeHeader(response.headers);
      expect(size.message_chars).toBeGreaterThanOrEqual(100_000);
      expect(size.media_parts).toBe(1);
      expect(harness.upstream.received).toHaveLength(1);
    },
  );
});

describe("Anthropic content the provider already holds (investigation.bounded)", () => {
  it("refuses mcp_servers, whose tools the provider lists, with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const error = await refusalOf(
      bounded.beta.messages.create({
        model: "claude-test",
        max_tokens: 64,
        messages: [{ role: "user", content: "List the open incidents." }],
        mcp_servers: [{ type: "url", name: "incidents", url: "https://mcp.example.com/sse" }],
        betas: ["mcp-client-2025-04-04"],
      }),
      "CACHE_PREFIX_UNKNOWN",
    );
    expect(bodyOf(error).error.message).toContain("mcp_servers");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses container.skills, which the provider expands, with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const error = await refusalOf(
      bounded.messages.create({
        model: "claude-test",
        max_tokens: 64,
        messages: [{ role: "user", content: "Make a slide deck of the incidents." }],
        container: { skills: [{ type: "anthropic", skill_id: "pptx", version: "latest" }] },
      }),
      "CACHE_PREFIX_UNKNOWN",
    );
    expect(bodyOf(error).error.message).toContain("container.skills");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("duplicate JSON keys (raw HTTP, as no SDK sends them)", () => {
  const large = JSON.stringify([{ role: "user", content: big }]);
  const small = JSON.stringify([{ role: "user", content: "hi" }]);
  const bodies: Array<[string, string]> = [
    ["a top-level messages", `{"model":"claude-test","max_tokens":64,"messages":${large},"messages":${small}}`],
    [
      "a content inside a message",
      `{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":${JSON.stringify(big)},"content":"hi"}]}`,
    ],
    [
      "a text inside a block",
      `{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":[{"type":"text","text":${JSON.stringify(big)},"text":"hi"}]}]}`,
    ],
    [
      "a top-level system",
      `{"model":"claude-test","max_tokens":64,"system":${JSON.stringify(big)},"system":"Be brief.","messages":${small}}`,
    ],
  ];

  it.each(bodies)(
    "refuses a body with a duplicate key in %s as INVALID_REQUEST, sending nothing",
    async (_where, text) => {
      const response = await postRaw(text);
      expect(response.status).toBe(400);
      expect(response.headers.get("x-should-retry")).toBe("false");
      const body = (await response.json()) as GatewayErrorBody;
      expect(body.type).toBe("error");
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: "INVALID_REQUEST" });
      expect(body.error.promptgate.code).toBe("INVALID_REQUEST");
      expect(harness.upstream.received).toHaveLength(0);
    },
  );
});

describe("an ordinary call under investigation.bounded", () => {
  const tools: Anthropic.Tool[] = [
    {
      name: "lookup_incident",
      description: "Looks an incident up by its id.",
      input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  ];
  const schema = {
    type: "object",
    properties: { cause: { type: "string" }, confidence: { type: "string", enum: ["low", "high"] } },
    required: ["cause", "confidence"],
    additionalProperties: false,
  };

  it("accepts a realistic messages.create and its prompt_size adds up", async () => {
    const { response } = await bounded.messages
      .create({
        model: "claude-test",
        max_tokens: 512,
        metadata: { user_id: "analyst-1" },
        system: "You triage incidents. Answer in JSON.",
        messages: [
          { role: "user", content: "The checkout API times out since 09:40." },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_1", name: "lookup_incident", input: { id: "INC-7" } }],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "INC-7: database pool exhausted." },
              { type: "text", text: "What is the likely cause?" },
            ],
          },
        ],
        tools,
        output_config: { format: { type: "json_schema", schema } },
      })
      .withResponse();
    expect(harness.upstream.received).toHaveLength(1);
    const size = sizeHeader(response.headers);
    expect(size).toMatchObject({
      check: "preflight",
      system_chars: "You triage incidents. Answer in JSON.".length,
      tool_chars: JSON.stringify(tools[0]).length,
      schema_chars: JSON.stringify(schema).length,
      cache_prefix_chars: 0,
      media_parts: 0,
      over_target: false,
    });
    expect(size.message_chars).toBeGreaterThan(0);
    expect(size.other_chars).toBeGreaterThan(0);
    const parts = ["system_chars", "message_chars", "tool_chars", "schema_chars", "other_chars", "cache_prefix_chars"];
    expect(size.total_chars).toBe(parts.reduce((total, part) => total + (size[part] as number), 0));
    expect(size.conservative_total_chars).toBe((size.total_chars as number) + 1500);
  });
});
