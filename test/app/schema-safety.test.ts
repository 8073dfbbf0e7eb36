import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadPolicies } from "../../src/policy/load-policies.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { type InProcessUpstream, inProcessUpstream } from "../support/in-process-upstream.js";

/** The 30 bytes of issue 12: a schema that is all of itself, and nothing else. */
const selfReference = { allOf: [{ $ref: "#" }] };

/** A schema of about `chars` characters as compact JSON, with nothing wrong but its size. */
function schemaOfSize(chars: number, salt = "s"): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; JSON.stringify(properties).length < chars - 40; index++) {
    properties[`${salt}${index}`] = { type: "string", description: "a field of a large but ordinary schema" };
  }
  return { type: "object", properties };
}

const policies = {
  "tight-schemas.toml": [
    'name = "tight.schemas"',
    "[window]",
    "enforce = true",
    "target_chars = 500000",
    "limit_chars = 1000000",
    "reserve_chars = 0",
    "[validation]",
    "max_schema_chars = 2000",
  ].join("\n"),
  "unvalidated.toml": [
    'name = "unvalidated"',
    "[window]",
    "enforce = false",
    "target_chars = 500000",
    "limit_chars = 1000000",
    "reserve_chars = 0",
    "[validation]",
    "enabled = false",
  ].join("\n"),
};

/** The shipped policies with `policies` added. */
async function shippedPoliciesWithOurs() {
  const shipped = readdirSync("policies")
    .filter((name) => name.endsWith(".toml") && name !== "models.toml")
    .map((name) => ({ path: name, text: readFileSync(join("policies", name), "utf8") }));
  const ours = Object.entries(policies).map(([path, text]) => ({ path, text }));
  const policySchema = JSON.parse(readFileSync("schemas/policy.schema.json", "utf8")) as object;
  return loadPolicies([...shipped, ...ours], policySchema);
}

/** The shipped named schemas with one large named schema added. */
function schemasWithLargeOne(): Map<string, unknown> {
  const schemas = new Map<string, unknown>();
  for (const name of readdirSync("schemas").filter((file) => file.startsWith("investigation_")))
    schemas.set(name.slice(0, -".json".length), JSON.parse(readFileSync(join("schemas", name), "utf8")));
  schemas.set("large_form", schemaOfSize(5_000, "named"));
  return schemas;
}

interface SurfaceCall {
  name: string;
  path: string;
  body(schema: unknown): Record<string, unknown>;
}

const surfaces: SurfaceCall[] = [
  {
    name: "OpenAI chat completions",
    path: "/openai/v1/chat/completions",
    body: (schema) => ({
      model: "gpt-test",
      messages: [{ role: "user", content: "Fill in the form." }],
      response_format: { type: "json_schema", json_schema: { name: "form", schema } },
    }),
  },
  {
    name: "OpenAI responses",
    path: "/openai/v1/responses",
    body: (schema) => ({
      model: "gpt-test",
      input: "Fill in the form.",
      text: { format: { type: "json_schema", name: "form", schema } },
    }),
  },
  {
    name: "Gemini",
    path: "/gemini/v1beta/models/gemini-test:generateContent",
    body: (schema) => ({
      contents: [{ role: "user", parts: [{ text: "Fill in the form." }] }],
      generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema },
    }),
  },
  {
    name: "Anthropic",
    path: "/anthropic/v1/messages",
    body: (schema) => ({
      model: "claude-test",
      max_tokens: 256,
      messages: [{ role: "user", content: "Fill in the form." }],
      output_config: { format: { type: "json_schema", schema } },
    }),
  },
];

let app: GatewayApp;
let upstream: InProcessUpstream;

beforeAll(async () => {
  upstream = inProcessUpstream();
  ({ app } = await appUnderTest(upstream.environment, memoryStore(), upstream.fetch, {
    policies: await shippedPoliciesWithOurs(),
    schemas: schemasWithLargeOne(),
  }));
});
beforeEach(() => {
  upstream.received.length = 0;
  upstream.answerWith(undefined);
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await app.request(path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-test",
      "x-api-key": "sk-test",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { response, body: (await response.json()) as Record<string, unknown> };
}

/** The `promptgate` member of a native error body, wherever the surface puts it. */
function promptgateOf(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.promptgate === "object") return record.promptgate as Record<string, unknown>;
  return promptgateOf(record.error);
}

describe("a response schema whose $refs loop without moving into the answer", () => {
  it.each(surfaces)("is refused on $name with 400 INVALID_REQUEST before anything is sent", async (surface) => {
    const { response, body } = await post(surface.path, surface.body(selfReference));
    expect(response.status).toBe(400);
    expect(promptgateOf(body)).toMatchObject({ code: "INVALID_REQUEST", retryable: false });
    expect(JSON.stringify(body)).toMatch(/refers to itself/);
    expect(upstream.received).toEqual([]);
  });

  it("is refused under a policy that does not validate answers, too", async () => {
    const { response } = await post(`/policies/unvalidated${surfaces[0]?.path}`, surfaces[0]?.body(selfReference));
    expect(response.status).toBe(400);
    expect(upstream.received).toEqual([]);
  });

  it("is refused when the loop runs through definitions, escapes and anchors", async () => {
    const schema = {
      $ref: "#/$defs/a~1b",
      $defs: { "a/b": { anyOf: [{ type: "string" }, { $ref: "#loop" }] }, c: { $anchor: "loop", not: { $ref: "#" } } },
    };
    const { response } = await post(surfaces[0]?.path ?? "", surfaces[0]?.body(schema));
    expect(response.status).toBe(400);
    expect(upstream.received).toEqual([]);
  });

  it("is answered by the simulated provider's gateway with a 400 at once, not a hang", async () => {
    const { app: simulated } = await appUnderTest({ PROMPTGATE_UPSTREAM_OPENAI: "simulated" });
    const response = await simulated.request("/openai/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(surfaces[0]?.body(selfReference)),
    });
    expect(response.status).toBe(400);
  });
});

describe("a recursive schema that moves into the answer", () => {
  const tree = { $ref: "#/$defs/node", $defs: { node: { type: "array", items: { $ref: "#/$defs/node" } } } };

  it("is sent, and an answer nested deeper than any stack is reported as invalid, not as a 500", async () => {
    const depth = 50_000;
    upstream.answerWith(() => {
      const content = "[".repeat(depth) + "]".repeat(depth);
      return Response.json({
        id: "chatcmpl-deep",
        object: "chat.completion",
        created: 1_767_225_600,
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop" }],
      });
    });
    const { response, body } = await post(surfaces[0]?.path ?? "", surfaces[0]?.body(tree));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    expect(body.promptgate).toEqual({
      validation: {
        valid: false,
        errors: [expect.objectContaining({ validation_path: "", validation_keyword: "nesting" })],
      },
    });
    expect(upstream.received).toHaveLength(1);
  });
});

describe("the policy's cap on a client schema's size", () => {
  it("refuses a schema over the default of 100,000 characters, naming the limit, before anything is sent", async () => {
    const { response, body } = await post(surfaces[0]?.path ?? "", surfaces[0]?.body(schemaOfSize(150_000)));
    expect(response.status).toBe(400);
    expect(promptgateOf(body)).toMatchObject({ code: "INVALID_REQUEST" });
    expect(JSON.stringify(body)).toContain("100000 (validation.max_schema_chars)");
    expect(upstream.received).toEqual([]);
  });

  it.each(surfaces)("refuses a schema over a policy's own cap on $name", async (surface) => {
    const { response, body } = await post(`/policies/tight.schemas${surface.path}`, surface.body(schemaOfSize(3_000)));
    expect(response.status).toBe(400);
    expect(JSON.stringify(body)).toContain("at most 2000 (validation.max_schema_chars)");
    expect(upstream.received).toEqual([]);
  });

  it("lets a schema at the cap through", async () => {
    const schema = schemaOfSize(1_990);
    expect(JSON.stringify(schema).length).toBeLessThanOrEqual(2_000);
    const { response } = await post(`/policies/tight.schemas${surfaces[0]?.path}`, surfaces[0]?.body(schema));
    expect(response.status).toBe(200);
  });

  it("does not cap a named schema, which the operator chose", async () => {
    const { response } = await post(
      `/policies/tight.schemas${surfaces[0]?.path}`,
      { model: "gpt-test", messages: [{ role: "user", content: "Fill in the form." }] },
      { "x-promptgate-schema": "large_form" },
    );
    expect(response.status).toBe(200);
    expect(upstream.received).toHaveLength(1);
  });
});
