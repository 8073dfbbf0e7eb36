import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import {
  createSimulatedProvider,
  type SimulatedProvider,
  simulatedOrigin,
} from "../../src/simulated/simulated-provider.js";

let sim: SimulatedProvider;

beforeEach(() => {
  sim = createSimulatedProvider();
});

function call(method: string, path: string, body?: unknown): Promise<Response> {
  return sim.fetch(
    new Request(`${simulatedOrigin}/openai/v1${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    }),
  );
}

interface SimulatedResponse {
  id: string;
  output_text: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

async function create(body: Record<string, unknown>): Promise<SimulatedResponse> {
  const response = await call("POST", "/responses", { model: "gpt-test", ...body });
  expect(response.status).toBe(200);
  return (await response.json()) as SimulatedResponse;
}

describe("stored responses of the simulated OpenAI API", () => {
  it("returns a response it produced from GET /v1/responses/{id}, usage included", async () => {
    const created = await create({ input: "Hello there" });
    const response = await call("GET", `/responses/${created.id}`);
    expect(response.status).toBe(200);
    const stored = (await response.json()) as SimulatedResponse;
    expect(stored).toEqual(created);
    expect(stored.usage.total_tokens).toBe(stored.usage.input_tokens + stored.usage.output_tokens);
  });

  it("answers an unknown id with OpenAI's native 404", async () => {
    const response = await call("GET", "/responses/resp_unknown");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: expect.any(String), type: "invalid_request_error", param: null, code: null },
    });
  });

  it("does not keep a response created with store: false, and says so in its store flag", async () => {
    const created = await create({ input: "Forget me", store: false });
    expect(created).toMatchObject({ store: false });
    expect((await call("GET", `/responses/${created.id}`)).status).toBe(404);
    expect(await create({ input: "Keep me" })).toMatchObject({ store: true });
  });

  it("keeps the response a stream completes", async () => {
    const response = await call("POST", "/responses", { model: "gpt-test", input: "streamed", stream: true });
    const text = await response.text();
    const completed = text
      .split("\n")
      .find((line) => line.includes('"response.completed"') && line.startsWith("data: "));
    const id = (JSON.parse(completed?.slice("data: ".length) ?? "{}") as { response: { id: string } }).response.id;
    expect((await call("GET", `/responses/${id}`)).status).toBe(200);
  });

  it("counts the stored history of previous_response_id in a follow-up turn's input tokens", async () => {
    const first = await create({ input: "x".repeat(400) });
    const second = await create({ input: "more", previous_response_id: first.id });
    expect(second.usage.input_tokens).toBe(first.usage.total_tokens + 1);
    const fetched = (await (await call("GET", `/responses/${second.id}`)).json()) as SimulatedResponse;
    expect(fetched.usage.total_tokens).toBe(second.usage.total_tokens);
  });

  it("refuses an unknown previous_response_id with OpenAI's native 400", async () => {
    const response = await call("POST", "/responses", {
      model: "gpt-test",
      input: "hi",
      previous_response_id: "resp_unknown",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message: expect.any(String),
        type: "invalid_request_error",
        param: "previous_response_id",
        code: "previous_response_not_found",
      },
    });
  });

  it("lets the openai SDK retrieve a response it created", async () => {
    const client = new OpenAI({
      apiKey: "x",
      baseURL: `${simulatedOrigin}/openai/v1`,
      fetch: (url: string | URL | Request, init?: RequestInit) => sim.fetch(new Request(url, init)),
      maxRetries: 0,
    });
    const created = await client.responses.create({ model: "gpt-test", input: "Keep this." });
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved.output_text).toBe(created.output_text);
    expect(retrieved.usage?.total_tokens).toBe(created.usage?.total_tokens);
  });
});
