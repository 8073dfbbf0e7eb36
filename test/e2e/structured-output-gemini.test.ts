import { readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError, type GenerateContentResponse, GoogleGenAI, Type } from "@google/genai";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { contractDiagnostics, investigationAnswers } from "../support/investigation-answers.js";

type SchemaNode = Record<string, unknown>;

/** One exchange between the SDK and the gateway, as the SDK's fetch saw it. */
interface Exchange {
  requestBody: string;
  /** A copy of the gateway's response, read after the SDK has read its own. */
  response: Response;
}

let harness: GatewayUnderTest;
let exchanges: Exchange[];

const v21 = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v21.json", import.meta.url), "utf8"),
) as SchemaNode;
const v22 = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
) as SchemaNode;

/** A string that stands for answer content: no error body or header may ever carry it. */
const secret = "SECRET-ANSWER-5c1e";

/** The shipped policies and `investigation.inlined`: investigation.bounded writing for `responseSchema`. */
async function policiesWithInlined(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "promptgate-policies-"));
  await cp("policies", folder, { recursive: true });
  const bounded = await readFile(join(folder, "investigation.bounded.toml"), "utf8");
  await writeFile(
    join(folder, "investigation.inlined.toml"),
    bounded
      .replace('name = "investigation.bounded"', 'name = "investigation.inlined"')
      .replace('schema_field = "responseJsonSchema"', 'schema_field = "responseSchema"'),
  );
  return folder;
}

beforeAll(async () => {
  harness = await startGatewayUnderTest({ PROMPTGATE_POLICIES: await policiesWithInlined() });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  exchanges = [];
});

/** A stock client with only its base URL changed (`prefix` pins a policy); its fetch records each exchange. */
function clientFor(prefix: string, headers: Record<string, string> = {}): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: "client-key",
    httpOptions: {
      baseUrl: `${harness.gateway.url}${prefix}/gemini`,
      headers,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        exchanges.push({ requestBody: typeof init?.body === "string" ? init.body : "", response: response.clone() });
        return response;
      },
    },
  });
}

const bounded = () => clientFor("/policies/investigation.bounded");
const inlined = () => clientFor("/policies/investigation.inlined");

const { validAnswer, answerWithStringFinding } = investigationAnswers(secret);

/** A Gemini generateContent response whose answer text is `text`. */
function geminiResponse(text: string): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 40, totalTokenCount: 52 },
    modelVersion: "gemini-test",
    responseId: "response-1",
  };
}

/** Makes the fake upstream answer every request with this JSON body. */
function upstreamAnswers(body: unknown, status = 200): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
}

function upstreamBody(index = 0): { generationConfig: SchemaNode } & SchemaNode {
  return JSON.parse(harness.upstream.received[index]?.body ?? "null");
}

function headerOf(result: GenerateContentResponse, name: string): string | undefined {
  return result.sdkHttpResponse?.headers?.[name];
}

/** The gateway's error body, which @google/genai keeps as the message of its ApiError. */
interface GeminiErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details: { reason: string }[];
    promptgate: { code: string; ref: string; retryable: boolean; diagnostics?: unknown; prompt_size?: SchemaNode };
  };
}

async function apiErrorOf(promise: Promise<unknown>): Promise<{ error: ApiError; body: GeminiErrorBody }> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(ApiError);
  const error = caught as ApiError;
  return { error, body: JSON.parse(error.message) as GeminiErrorBody };
}

/** Everything the gateway sent back for the last exchange: headers and body text. */
async function lastResponseText(): Promise<string> {
  const response = exchanges.at(-1)!.response;
  return `${JSON.stringify([...response.headers])}\n${await response.text()}`;
}

/** The schema keywords used anywhere in a schema (property names are not keywords). */
function keywordsOf(node: unknown): Set<string> {
  const found = new Set<string>();
  const visit = (schema: unknown): void => {
    if (typeof schema !== "object" || schema === null) return;
    for (const [keyword, value] of Object.entries(schema)) {
      found.add(keyword);
      if (keyword === "properties" || keyword === "$defs") Object.values(value as SchemaNode).forEach(visit);
      else if (keyword === "items") visit(value);
      else if (keyword === "anyOf" || keyword === "oneOf" || keyword === "allOf") (value as unknown[]).forEach(visit);
    }
  };
  visit(node);
  return found;
}

/** A body without its response schema, to compare what else the client and the upstream saw. */
function withoutResponseSchema(body: SchemaNode): SchemaNode {
  const { responseJsonSchema: _schema, ...config } = body.generationConfig as SchemaNode;
  return { ...body, generationConfig: config };
}

function propertiesOf(node: unknown): Record<string, SchemaNode> {
  return (node as { properties: Record<string, SchemaNode> }).properties;
}

describe("Gemini's schema projection through @google/genai", () => {
  it("sends the nested projection of the v22 schema in responseJsonSchema and the client's other fields unchanged", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    await bounded().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap the investigation of job N12.",
      config: {
        systemInstruction: "Answer in JSON.",
        temperature: 0.1,
        maxOutputTokens: 2048,
        responseMimeType: "application/json",
        responseJsonSchema: v22,
      },
    });
    const sent = JSON.parse(exchanges[0]!.requestBody) as SchemaNode;
    const upstream = upstreamBody();
    expect(withoutResponseSchema(upstream)).toEqual(withoutResponseSchema(sent));
    expect(upstream.generationConfig.responseMimeType).toBe("application/json");
    const projected = upstream.generationConfig.responseJsonSchema as SchemaNode;
    const keywords = keywordsOf(projected);
    for (const dropped of ["pattern", "maxItems", "additionalProperties", "$defs", "$ref", "oneOf", "discriminator"]) {
      expect(keywords.has(dropped), dropped).toBe(false);
    }
    expect(projected).toMatchObject({ type: "object", required: ["assessment", "update", "next"] });
    const workingBrief = propertiesOf(propertiesOf(projected).update).working_brief;
    const finding = propertiesOf(workingBrief).findings?.items;
    expect(finding).toMatchObject({ type: "object", required: ["id", "direction", "text", "scope", "evidence_refs"] });
    expect(Object.keys(propertiesOf(finding))).toEqual(["id", "direction", "text", "scope", "evidence_refs"]);
    expect(propertiesOf(finding).evidence_refs).toEqual({ type: "array", items: { type: "string" } });
    const next = propertiesOf(projected).next;
    expect(next).toMatchObject({ type: "object", required: ["action", "arguments", "rationale"] });
    expect(propertiesOf(next).action).toEqual({
      type: "string",
      enum: ["tool/project.query", "recall", "checkpoint", "finish"],
    });
    expect(propertiesOf(next).arguments).toMatchObject({ type: "object" });
    expect(propertiesOf(next).rationale).toEqual({ type: "string" });
  });

  it("sends a nested projection that accepts a valid answer of every action, so Gemini can produce each", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    await bounded().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    const projected = upstreamBody().generationConfig.responseJsonSchema as SchemaNode;
    const validate = new Ajv2020({ strict: false }).compile(projected);
    const nexts = [
      { action: "tool/project.query", arguments: { kind: "sql", query: "select 1", offset: 0, limit: 10 } },
      { action: "recall", arguments: { kind: "recall", evidence_refs: ["E000001"], page: 0 } },
      { action: "checkpoint", arguments: { reason: "Enough evidence." } },
      { action: "finish", arguments: { diagnosis: "The scheduler drops the job.", confidence: "high" } },
    ];
    for (const next of nexts) {
      const answer = { ...validAnswer(), next: { ...next, rationale: "r" } };
      expect(validate(answer), next.action).toBe(true);
    }
  });

  it("sends the outer projection under investigation.bounded.v1: typed top-level properties, nothing nested", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    await clientFor("/policies/investigation.bounded.v1").models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap the investigation of job N12.",
      config: { temperature: 0.3, responseMimeType: "application/json", responseJsonSchema: v21 },
    });
    const sent = JSON.parse(exchanges[0]!.requestBody) as SchemaNode;
    const upstream = upstreamBody();
    expect(withoutResponseSchema(upstream)).toEqual(withoutResponseSchema(sent));
    expect(upstream.generationConfig.responseJsonSchema).toEqual({
      type: "object",
      description: "Bootstrap answer of the investigation controller (contract v21, kept for frozen policies).",
      properties: {
        assessment: { type: "object" },
        update: { type: "object" },
        next: { type: "object", description: "Exactly one next action." },
      },
      required: ["assessment", "update", "next"],
    });
  });

  it("refuses v22 under investigation.bounded.v1, whose cases keep the v21 contract, and sends nothing", async () => {
    const refused = clientFor("/policies/investigation.bounded.v1").models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    const sentBefore = harness.upstream.received.length;
    await expect(refused).rejects.toMatchObject({ status: 400 });
    expect(harness.upstream.received.length).toBe(sentBefore);
  });

  it("reports the client's full schema as the preflight's schema_chars", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    const result = await bounded().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    const size = JSON.parse(headerOf(result, "x-promptgate-prompt-size") ?? "null");
    expect(size).toMatchObject({ check: "preflight", schema_chars: JSON.stringify(v22).length });
  });

  it("measures the provider check on the projection Gemini receives, which an inlined $ref can make larger", async () => {
    // One definition used twenty times: small as written, large once every $ref is inlined
    // for responseSchema (responseJsonSchema keeps the references, and the size).
    const note = { type: "object", description: "n".repeat(850), properties: { text: { type: "string" } } };
    const schema = {
      type: "object",
      $defs: { note },
      properties: Object.fromEntries(
        Array.from({ length: 20 }, (_, index) => [`note_${index}`, { $ref: "#/$defs/note" }]),
      ),
    };
    const fullChars = JSON.stringify(schema).length;
    const request = {
      model: "gemini-test",
      contents: "hi",
      config: { responseMimeType: "application/json", responseJsonSchema: schema },
    };
    upstreamAnswers(geminiResponse("{}"));
    await bounded().models.generateContent(request);
    expect(JSON.stringify(upstreamBody().generationConfig.responseJsonSchema).length).toBeLessThanOrEqual(fullChars);

    harness.upstream.received.length = 0;
    upstreamAnswers(geminiResponse("{}"));
    await inlined().models.generateContent(request);
    const projectedChars = JSON.stringify(upstreamBody().generationConfig.responseSchema).length;
    expect(projectedChars).toBeGreaterThan(fullChars + 1_500);
    expect(projectedChars).toBeLessThan(20_000);

    harness.upstream.received.length = 0;
    const messageChars = 20_000 - projectedChars + 1;
    const { body } = await apiErrorOf(
      inlined().models.generateContent({
        model: "gemini-test",
        contents: "x".repeat(messageChars),
        config: { responseMimeType: "application/json", responseJsonSchema: schema },
      }),
    );
    expect(body.error.promptgate.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(body.error.promptgate.prompt_size).toMatchObject({
      check: "provider",
      message_chars: messageChars,
      schema_chars: projectedChars,
      total_chars: messageChars + projectedChars,
      reserve_chars: 0,
      conservative_total_chars: 20_001,
      limit_chars: 20_000,
    });
    const preflight = JSON.parse(exchanges.at(-1)!.response.headers.get("x-promptgate-prompt-size") ?? "null");
    expect(preflight).toMatchObject({ check: "preflight", schema_chars: fullChars });
    expect(harness.upstream.received).toHaveLength(0);
  });

  describe("a client responseSchema in OpenAPI form", () => {
    const openApiSchema = {
      type: Type.OBJECT,
      properties: {
        labels: { type: Type.ARRAY, minItems: "1", items: { type: Type.STRING, enum: ["bug", "feature"] } },
        note: { type: Type.STRING, nullable: true },
      },
      required: ["labels", "note"],
      propertyOrdering: ["labels", "note"],
    };

    it("is accepted, projected into the policy's field and the answer validated against it", async () => {
      upstreamAnswers(geminiResponse(JSON.stringify({ labels: ["bug"], note: null })));
      const result = await bounded().models.generateContent({
        model: "gemini-test",
        contents: "Label this issue.",
        config: { responseMimeType: "application/json", responseSchema: openApiSchema },
      });
      expect(headerOf(result, "x-promptgate-validation")).toBe("valid");
      expect(result.text).toBe(JSON.stringify({ labels: ["bug"], note: null }));
      const config = upstreamBody().generationConfig;
      expect(config.responseSchema).toBeUndefined();
      expect(config.responseJsonSchema).toMatchObject({ type: "object", required: ["labels", "note"] });
    });

    it("refuses an answer that breaks a count keyword sent as an int64 string", async () => {
      upstreamAnswers(geminiResponse(JSON.stringify({ labels: [], note: "n" })));
      const { error, body } = await apiErrorOf(
        bounded().models.generateContent({
          model: "gemini-test",
          contents: "Label this issue.",
          config: { responseMimeType: "application/json", responseSchema: openApiSchema },
        }),
      );
      expect(error.status).toBe(422);
      expect(body.error.promptgate.diagnostics).toMatchObject({
        valid: false,
        errors: [{ validation_path: "/labels", validation_keyword: "minItems" }],
      });
    });
  });

  it("answers a schema with an external $ref with ApiError 400 INVALID_REQUEST, sending nothing", async () => {
    const { error, body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: {
          responseMimeType: "application/json",
          responseJsonSchema: {
            type: "object",
            properties: { finding: { $ref: "https://schemas.example.com/finding.json" } },
          },
        },
      }),
    );
    expect(error.status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(body.error.details[0]?.reason).toBe("INVALID_REQUEST");
    expect(body.error.promptgate).toMatchObject({ code: "INVALID_REQUEST", retryable: false });
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("local validation of Gemini answers under on_invalid = error", () => {
  it("raises ApiError 422 RESPONSE_SCHEMA_INVALID with the contract's diagnostics and no answer value", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(answerWithStringFinding())));
    const { error, body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(error.status).toBe(422);
    expect(body.error).toMatchObject({ code: 422, status: "FAILED_PRECONDITION" });
    expect(body.error.details[0]?.reason).toBe("RESPONSE_SCHEMA_INVALID");
    expect(body.error.promptgate).toEqual({
      code: "RESPONSE_SCHEMA_INVALID",
      ref: expect.stringMatching(/^ref_[0-9a-f]{16}$/),
      retryable: false,
      diagnostics: contractDiagnostics,
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("masks an unknown property name in the path and echoes neither it nor its value", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify({ ...validAnswer(), [secret]: secret })));
    const { body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(body.error.promptgate.diagnostics).toMatchObject({
      valid: false,
      errors: [{ validation_path: "/*", validation_keyword: "additionalProperties" }],
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("reports an answer that is not JSON with keyword json", async () => {
    upstreamAnswers(geminiResponse(`{"assessment": {"summary": "${secret}"`));
    const { error, body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(error.status).toBe(422);
    expect(body.error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: expect.any(String) }],
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("passes a valid answer through byte for byte with x-promptgate-validation: valid", async () => {
    const upstream = geminiResponse(JSON.stringify(validAnswer()));
    upstreamAnswers(upstream);
    const result = await bounded().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    expect(headerOf(result, "x-promptgate-validation")).toBe("valid");
    expect(result.text).toBe(JSON.stringify(validAnswer()));
    expect(await exchanges[0]!.response.text()).toBe(JSON.stringify(upstream));
  });
});

describe("Gemini answers under on_invalid = annotate (the default policy)", () => {
  it("relays an invalid answer unchanged plus a top-level promptgate.validation member", async () => {
    const upstream = geminiResponse(JSON.stringify(answerWithStringFinding()));
    upstreamAnswers(upstream);
    const result = await clientFor("").models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    expect(headerOf(result, "x-promptgate-validation")).toBe("invalid");
    expect(result.text).toBe(JSON.stringify(answerWithStringFinding()));
    // @google/genai keeps only the fields it knows, so the member is read from the raw body.
    const { promptgate, ...rest } = JSON.parse(await exchanges[0]!.response.text()) as SchemaNode;
    expect(rest).toEqual(upstream);
    expect(promptgate).toEqual({ validation: contractDiagnostics });
  });

  it("annotates a valid answer as valid", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    const result = await clientFor("/policies/default").models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    expect(headerOf(result, "x-promptgate-validation")).toBe("valid");
    const body = JSON.parse(await exchanges[0]!.response.text()) as SchemaNode;
    expect(body.promptgate).toEqual({ validation: { valid: true, errors: [] } });
  });
});

describe("the x-promptgate-schema header on Gemini", () => {
  const named = () =>
    clientFor("/policies/investigation.bounded", { "x-promptgate-schema": "investigation_bootstrap_v22" });

  it("sends the named schema's projection as responseJsonSchema with responseMimeType application/json", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(validAnswer())));
    await bounded().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    const nativeProjection = upstreamBody(0).generationConfig.responseJsonSchema;

    const result = await named().models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { temperature: 0.2 },
    });
    expect(headerOf(result, "x-promptgate-validation")).toBe("valid");
    expect(upstreamBody(1).generationConfig).toEqual({
      temperature: 0.2,
      responseMimeType: "application/json",
      responseJsonSchema: nativeProjection,
    });
    const size = JSON.parse(headerOf(result, "x-promptgate-prompt-size") ?? "null");
    expect(size).toMatchObject({ check: "preflight", schema_chars: JSON.stringify(v22).length });
  });

  it("validates the answer against the named schema", async () => {
    upstreamAnswers(geminiResponse(JSON.stringify(answerWithStringFinding())));
    const { error, body } = await apiErrorOf(named().models.generateContent({ model: "gemini-test", contents: "Go." }));
    expect(error.status).toBe(422);
    expect(body.error.promptgate.diagnostics).toEqual(contractDiagnostics);
  });

  it("answers an unknown schema name with ApiError 400 INVALID_REQUEST, sending nothing", async () => {
    const unknown = clientFor("/policies/investigation.bounded", { "x-promptgate-schema": "no_such_schema_7d2b" });
    const { error, body } = await apiErrorOf(unknown.models.generateContent({ model: "gemini-test", contents: "Go." }));
    expect(error.status).toBe(400);
    expect(body.error.details[0]?.reason).toBe("INVALID_REQUEST");
    expect(body.error.promptgate.code).toBe("INVALID_REQUEST");
    expect(await lastResponseText()).not.toContain("no_such_schema_7d2b");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("a streamed Gemini answer with a schema", () => {
  it("passes an invalid streamed answer through unchanged under on_invalid = error", async () => {
    const answer = JSON.stringify(answerWithStringFinding());
    const pieces = [answer.slice(0, 40), answer.slice(40, 120), answer.slice(120)];
    const frames = pieces.map(
      (text, index) =>
        `data: ${JSON.stringify({
          candidates: [
            {
              content: { role: "model", parts: [{ text }] },
              index: 0,
              ...(index === pieces.length - 1 ? { finishReason: "STOP" } : {}),
            },
          ],
          modelVersion: "gemini-test",
        })}\r\n\r\n`,
    );
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (const frame of frames) response.write(frame);
      response.end();
    });
    const stream = await bounded().models.generateContentStream({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    const texts: string[] = [];
    for await (const chunk of stream) texts.push(chunk.text ?? "");
    expect(texts).toEqual(pieces);
    expect(await exchanges[0]!.response.text()).toBe(frames.join(""));
    expect(harness.upstream.received[0]?.url).toBe("/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
    expect(keywordsOf(upstreamBody().generationConfig.responseJsonSchema).has("$defs")).toBe(false);
  });
});

describe("Gemini's own rejection of the projected schema", () => {
  const rejection = {
    error: {
      code: 400,
      status: "INVALID_ARGUMENT",
      message: "A schema in GenerationConfig in the request exceeds the maximum allowed nesting depth.",
    },
  };

  it("becomes ApiError 400 INVALID_REQUEST with keyword provider_schema and without the provider's text", async () => {
    upstreamAnswers(rejection, 400);
    const { error, body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(error.status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(body.error.details[0]?.reason).toBe("INVALID_REQUEST");
    expect(body.error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "provider_schema", hint: expect.any(String) }],
    });
    const text = await lastResponseText();
    expect(text).not.toContain("nesting depth");
    expect(text).not.toContain(rejection.error.message);
    expect(harness.upstream.received).toHaveLength(1);
  });

  // generation_config, so a rejected temperature is reported as a rejection of the schema. Fix: match
  // only what names the schema (response_?(json_?)?schema, "schema in GenerationConfig", nesting depth,
  // too many states), not generation_?config on its own.
  it("does not report a rejected generation_config.temperature as a rejection of the schema", async () => {
    upstreamAnswers(
      {
        error: {
          code: 400,
          status: "INVALID_ARGUMENT",
          message: "* GenerateContentRequest.generation_config.temperature: must be less than or equal to 2.0\n",
        },
      },
      400,
    );
    const { error } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { temperature: 5, responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(error.status).toBe(400);
    expect(await lastResponseText()).not.toContain("provider_schema");
  });

  it("names the member its field path names (a map's [i] is the i-th member of the schema sent) and the keyword", async () => {
    upstreamAnswers(
      {
        error: {
          code: 400,
          status: "INVALID_ARGUMENT",
          message:
            "Invalid JSON payload received. Unknown name \"exclusiveMinimum\" at 'generation_config.response_schema.properties[1].value': Cannot find field.",
        },
      },
      400,
    );
    const schema = { type: "object", properties: { first: { type: "string" }, second: { type: "integer" } } };
    const { body } = await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: schema },
      }),
    );
    expect(body.error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "/properties/second",
          validation_keyword: "provider_schema",
          refused_keyword: "exclusiveMinimum",
          hint: "The provider rejected the response schema at /properties/second, naming its keyword 'exclusiveMinimum'.",
        },
      ],
    });
    expect(await lastResponseText()).not.toContain("Cannot find field");
  });

  // Any other failed answer goes through the one classifier: a fixed message, never the provider's text
  // (contract section 5), unless the policy passes upstream error text through.
  it("does not relay the provider's text of a 400 that is not about the schema", async () => {
    upstreamAnswers(
      { error: { code: 400, status: "INVALID_ARGUMENT", message: "API key not valid. Please pass a valid API key." } },
      400,
    );
    await apiErrorOf(
      bounded().models.generateContent({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(await lastResponseText()).not.toContain("API key not valid");
  });

  it("is reported the same way for a streamed call", async () => {
    upstreamAnswers(rejection, 400);
    const { error, body } = await apiErrorOf(
      bounded().models.generateContentStream({
        model: "gemini-test",
        contents: "Bootstrap.",
        config: { responseMimeType: "application/json", responseJsonSchema: v22 },
      }),
    );
    expect(error.status).toBe(400);
    expect(body.error.details[0]?.reason).toBe("INVALID_REQUEST");
    expect(await lastResponseText()).not.toContain("nesting depth");
  });
});
