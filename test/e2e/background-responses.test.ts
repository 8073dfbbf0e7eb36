import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { heldOutput } from "../support/held-output.js";
import { copyPolicies, editPolicy, estimatingPolicy } from "../support/temp-state.js";

let harness: GatewayUnderTest;

const charsPerToken = 4.5;

// OpenAI's own background mode, passed through and tracked: the policies' `[jobs] mode = "provider"`.
const providerJobs = '\n[jobs]\nmode = "provider"\n';

beforeAll(async () => {
  const policies = copyPolicies({
    "investigation.estimate.toml": estimatingPolicy("investigation.estimate", charsPerToken) + providerJobs,
  });
  editPolicy(policies, "investigation.bounded.toml", (text) => text + providerJobs);
  harness = await startGatewayUnderTest({ PROMPTGATE_POLICIES: policies });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

function clientFor(policy: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/${policy}/openai/v1`,
    maxRetries: 0,
  });
}

const bounded = () => clientFor("investigation.bounded");

function sizeHeader(response: Response): Record<string, number | string | boolean> {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

/** What the fake upstream received, as `METHOD /path?query`. */
const received = () => harness.upstream.received.map((request) => `${request.method} ${request.url}`);

/** Makes the fake upstream answer every request with `body` as JSON. */
function answerJson(body: unknown): void {
  harness.upstream.answerWith((_request, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
}

/** The response as it ended, with one assistant message of `text`. */
function ended(queued: OpenAI.Responses.Response, status: string, text: string): Record<string, unknown> {
  const { output_text: _outputText, ...wire } = queued;
  return {
    ...wire,
    status,
    output: [
      {
        id: "msg_bg",
        type: "message",
        role: "assistant",
        status: status === "completed" ? "completed" : "incomplete",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20 },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string | null | undefined> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return (error as InstanceType<typeof OpenAI.APIError>).code;
}

async function createInBackground(client: OpenAI, input: string): Promise<OpenAI.Responses.Response> {
  const queued = await client.responses.create({ model: "gpt-test", input, background: true });
  expect(queued.status).toBe("queued");
  harness.upstream.received.length = 0;
  return queued;
}

function continuation(client: OpenAI, previous: string, input = "and then?") {
  return client.responses.create({ model: "gpt-test", input, previous_response_id: previous });
}

describe("background Responses through the gateway, with the openai SDK", () => {
  it("rejects a continuation of a background response whose output it has not seen with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "q".repeat(500));
    expect(await codeOf(continuation(client, queued.id))).toBe("CACHE_PREFIX_UNKNOWN");
    expect(received()).toEqual([]);
  });

  it("does not take a queued create answer's empty output for the response's output (regression: it counted 0 characters)", async () => {
    const client = bounded();
    const created = await client.responses.create({ model: "gpt-test", input: "first turn" });
    answerJson({ ...created, id: "resp_queued", status: "queued", output: [], background: true, usage: undefined });
    const queued = await client.responses.create({ model: "gpt-test", input: "r".repeat(300), background: true });
    harness.upstream.received.length = 0;
    expect(await codeOf(continuation(client, queued.id))).toBe("CACHE_PREFIX_UNKNOWN");
    expect(received()).toEqual([]);
  });

  it("accepts a continuation once a retrieve shows the response completed, counting its output in cache_prefix_chars", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "c".repeat(400));
    const retrieved = await client.responses.retrieve(queued.id);
    expect(retrieved.status).toBe("completed");
    expect(retrieved.output_text.length).toBeGreaterThan(0);
    const next = await continuation(client, queued.id).withResponse();
    expect(sizeHeader(next.response)).toMatchObject({
      cache_prefix_chars: 400 + heldOutput(retrieved),
      message_chars: "and then?".length,
    });
    expect(received()).toEqual([`GET /openai/v1/responses/${queued.id}`, "POST /openai/v1/responses"]);
  });

  it("sends a retrieve upstream on the route it matched with the client's credential", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "credential");
    await client.responses.retrieve(queued.id);
    expect(harness.upstream.received[0]?.headers.authorization).toBe("Bearer sk-client");
  });

  it("counts a completed output once however often the response is retrieved", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "o".repeat(200));
    const retrieved = await client.responses.retrieve(queued.id);
    await client.responses.retrieve(queued.id);
    await client.responses.retrieve(queued.id);
    const next = await continuation(client, queued.id).withResponse();
    expect(sizeHeader(next.response).cache_prefix_chars).toBe(200 + heldOutput(retrieved));
  });

  it("keeps a response unknown while a retrieve shows it still in progress", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "p".repeat(200));
    answerJson({ ...queued, status: "in_progress" });
    expect((await client.responses.retrieve(queued.id)).status).toBe("in_progress");
    harness.upstream.answerWith(undefined);
    harness.upstream.received.length = 0;
    expect(await codeOf(continuation(client, queued.id))).toBe("CACHE_PREFIX_UNKNOWN");
    expect(received()).toEqual([]);
  });

  it("rejects a continuation whose long background output crosses the limit with INVESTIGATION_PROMPT_LIMIT, sending nothing", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "l".repeat(100));
    const long = ended(queued, "completed", "x".repeat(25_000));
    answerJson(long);
    await client.responses.retrieve(queued.id);
    harness.upstream.answerWith(undefined);
    harness.upstream.received.length = 0;
    const error = await continuation(client, queued.id).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    const promptgate = (apiError.error as { promptgate: { prompt_size: Record<string, unknown> } }).promptgate;
    expect(promptgate.prompt_size).toMatchObject({ cache_prefix_chars: 100 + heldOutput(long), limit_chars: 20_000 });
    expect(received()).toEqual([]);
  });

  it("records the partial output a cancel answers", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "k".repeat(300));
    answerJson(ended(queued, "cancelled", "partial ".repeat(100)));
    const cancelled = await client.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    expect(received()).toEqual([`POST /openai/v1/responses/${queued.id}/cancel`]);
    harness.upstream.answerWith(undefined);
    const next = await continuation(client, queued.id).withResponse();
    expect(sizeHeader(next.response).cache_prefix_chars).toBe(300 + heldOutput(cancelled));
  });

  it("records a cancelled response with no output once the cancel answers it", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "n".repeat(300));
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    const next = await continuation(client, queued.id).withResponse();
    expect(sizeHeader(next.response).cache_prefix_chars).toBe(300);
  });

  it("forgets a deleted response, so that its continuation is answered as unknown (SESSION_NOT_FOUND)", async () => {
    const client = bounded();
    const created = await client.responses.create({ model: "gpt-test", input: "delete me" });
    await client.responses.delete(created.id);
    expect(received()).toEqual(["POST /openai/v1/responses", `DELETE /openai/v1/responses/${created.id}`]);
    harness.upstream.received.length = 0;
    expect(await codeOf(continuation(client, created.id))).toBe("previous_response_not_found");
    expect(received()).toEqual([]);
  });

  it("lists a background response's input items", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "list my input");
    const page = await client.responses.inputItems.list(queued.id);
    expect(page.data).toMatchObject([{ type: "message", role: "user", content: [{ text: "list my input" }] }]);
    expect(received()).toEqual([`GET /openai/v1/responses/${queued.id}/input_items`]);
  });

  it("passes a streamed retrieve through from starting_after and records the response its last event ends", async () => {
    const client = bounded();
    const queued = await createInBackground(client, "s".repeat(250));
    const stream = await client.responses.retrieve(queued.id, { stream: true, starting_after: 2 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events[0]?.sequence_number).toBe(3);
    const last = events.at(-1);
    expect(last?.type).toBe("response.completed");
    expect(received()).toEqual([`GET /openai/v1/responses/${queued.id}?stream=true&starting_after=2`]);
    const next = await continuation(client, queued.id).withResponse();
    expect(sizeHeader(next.response).cache_prefix_chars).toBe(
      250 + (last?.type === "response.completed" ? heldOutput(last.response) : Number.NaN),
    );
  });

  it("passes a streamed retrieve's events to the client before the upstream stream has ended", async () => {
    let releaseRest: () => void = () => undefined;
    const restReleased = new Promise<void>((resolve) => {
      releaseRest = resolve;
    });
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write('event: response.in_progress\ndata: {"type":"response.in_progress","sequence_number":4}\n\n');
      void restReleased.then(() => response.end());
    });
    try {
      const response = await fetch(`${harness.gateway.url}/openai/v1/responses/resp_held?stream=true&starting_after=3`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no first event")), 5_000)),
      ]);
      expect(new TextDecoder().decode(first.value)).toContain("response.in_progress");
      releaseRest();
      // The provider's stream closed before its last event: the client is told it broke off.
      let rest = "";
      for (let read = await reader.read(); !read.done; read = await reader.read())
        rest += new TextDecoder().decode(read.value);
      expect(rest).toMatch(/^data: {"error":{"message":"The provider/);
    } finally {
      releaseRest();
    }
  });

  it("answers 404 to ids that are not Responses ids, traversal-like ones included, without any upstream request", async () => {
    const paths = [
      "/responses/..%2Fmodels",
      "/responses/%2E%2E",
      "/responses/%2e%2e/cancel",
      "/responses/resp_1%2F..%2F..%2Fmodels",
      "/responses/resp%20x/input_items",
      "/responses/resp_1/other",
      "/responses/resp_1/cancel/again",
      `/responses/${"a".repeat(257)}`,
    ];
    for (const path of paths) {
      const response = await fetch(`${harness.gateway.url}/openai/v1${path}`);
      expect(response.status, path).toBe(404);
    }
    const deletion = await fetch(`${harness.gateway.url}/openai/v1/responses/a%2Fb`, { method: "DELETE" });
    expect(deletion.status).toBe(404);
    await expect(bounded().responses.retrieve("a/b")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(received()).toEqual([]);
  });

  it("answers 405 with Allow to a method a stored-response route does not take, without any upstream request", async () => {
    const cases: Array<[method: string, path: string, allow: string]> = [
      ["PUT", "/responses/resp_1", "GET, DELETE"],
      ["GET", "/responses/resp_1/cancel", "POST"],
      ["POST", "/responses/resp_1/input_items", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await fetch(`${harness.gateway.url}/openai/v1${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
    }
    expect(received()).toEqual([]);
  });
});

describe("background Responses under a policy that estimates unknown prefixes", () => {
  const estimating = () => clientFor("investigation.estimate");

  it("estimates a background response whose output it has not seen from the provider's total_tokens", async () => {
    const client = estimating();
    const queued = await createInBackground(client, "e".repeat(900));
    const next = await continuation(client, queued.id, "go on").withResponse();
    // The simulated provider completes the response when the gateway asks for its token count.
    const provider = (await (
      await fetch(`${harness.upstream.origin}/openai/v1/responses/${queued.id}`)
    ).json()) as OpenAI.Responses.Response;
    expect(sizeHeader(next.response)).toMatchObject({
      cache_prefix_chars: Math.ceil((provider.usage?.total_tokens ?? Number.NaN) * charsPerToken),
      cache_prefix_estimated: true,
    });
    expect(received().slice(0, 2)).toEqual([`GET /openai/v1/responses/${queued.id}`, "POST /openai/v1/responses"]);
  });

  it("refuses a background response the provider reports no usage for yet with CACHE_PREFIX_UNKNOWN", async () => {
    const client = estimating();
    const queued = await createInBackground(client, "u".repeat(900));
    answerJson({ ...queued, status: "in_progress" });
    expect(await codeOf(continuation(client, queued.id))).toBe("CACHE_PREFIX_UNKNOWN");
    expect(received()).toEqual([`GET /openai/v1/responses/${queued.id}`]);
  });
});
