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

describe("background responses of the simulated OpenAI API", () => {
  async function createInBackground(input: unknown): Promise<Record<string, unknown> & { id: string }> {
    const response = await call("POST", "/responses", { model: "gpt-test", input, background: true });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown> & { id: string };
  }

  it("answers a background request at once with a queued response and no output", async () => {
    const queued = await createInBackground("Take your time.");
    expect(queued).toMatchObject({ object: "response", status: "queued", background: true, output: [] });
    // As the API sends it: `usage` is null until the response ends.
    expect(queued.usage).toBeNull();
    expect(queued).not.toHaveProperty("completed_at");
  });

  it("completes a background response on its first retrieval", async () => {
    const queued = await createInBackground("Take your time.");
    const retrieved = await (await call("GET", `/responses/${queued.id}`)).json();
    expect(retrieved).toMatchObject({ id: queued.id, status: "completed", background: true });
    expect(JSON.stringify(retrieved.output)).toContain("Take your time.");
    expect(retrieved.usage.total_tokens).toBeGreaterThan(0);
  });

  it("answers a cancel of a queued background response with the cancelled response, nothing generated", async () => {
    const queued = await createInBackground("Never mind.");
    const response = await call("POST", `/responses/${queued.id}/cancel`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: queued.id, status: "cancelled", output: [] });
    expect(await (await call("GET", `/responses/${queued.id}`)).json()).toMatchObject({ status: "cancelled" });
  });

  it("answers a cancel of a background response that has completed with the response as it is", async () => {
    const queued = await createInBackground("Done already.");
    await call("GET", `/responses/${queued.id}`);
    expect(await (await call("POST", `/responses/${queued.id}/cancel`)).json()).toMatchObject({ status: "completed" });
  });

  it("refuses to cancel a response that was not created in the background", async () => {
    const created = await create({ input: "In the foreground." });
    const response = await call("POST", `/responses/${created.id}/cancel`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { type: "invalid_request_error" } });
  });

  it("deletes a stored response, answering the deletion object, and then knows it no more", async () => {
    const created = await create({ input: "Delete me." });
    const response = await call("DELETE", `/responses/${created.id}`);
    expect(await response.json()).toEqual({ id: created.id, object: "response", deleted: true });
    expect((await call("GET", `/responses/${created.id}`)).status).toBe(404);
    expect((await call("DELETE", `/responses/${created.id}`)).status).toBe(404);
  });

  it("lists a response's input items newest first, each with an id", async () => {
    const queued = await createInBackground([
      { role: "developer", content: "Be brief." },
      { role: "user", content: [{ type: "input_text", text: "Hello" }] },
    ]);
    const list = await (await call("GET", `/responses/${queued.id}/input_items`)).json();
    expect(list).toMatchObject({ object: "list", has_more: false });
    expect(list.data).toEqual([
      {
        id: expect.any(String),
        type: "message",
        role: "user",
        status: "completed",
        content: [{ type: "input_text", text: "Hello" }],
      },
      {
        id: expect.any(String),
        type: "message",
        role: "developer",
        status: "completed",
        content: [{ type: "input_text", text: "Be brief." }],
      },
    ]);
    expect(list.first_id).toBe(list.data[0].id);
    expect(list.last_id).toBe(list.data[1].id);
  });

  it("pages input items by limit and after, oldest first with order=asc", async () => {
    const queued = await createInBackground(["one", "two", "three"].map((text) => ({ role: "user", content: text })));
    const first = await (await call("GET", `/responses/${queued.id}/input_items?order=asc&limit=2`)).json();
    expect(first.data.map((item: { content: Array<{ text: string }> }) => item.content[0]?.text)).toEqual([
      "one",
      "two",
    ]);
    expect(first.has_more).toBe(true);
    const next = await (
      await call("GET", `/responses/${queued.id}/input_items?order=asc&limit=2&after=${first.last_id}`)
    ).json();
    expect(next.data.map((item: { content: Array<{ text: string }> }) => item.content[0]?.text)).toEqual(["three"]);
    expect(next.has_more).toBe(false);
  });

  it("streams a background response's events from a retrieval, resuming after starting_after", async () => {
    const queued = await createInBackground("Stream me later.");
    const response = await call("GET", `/responses/${queued.id}?stream=true&starting_after=1`);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice("data: ".length)) as { type: string; sequence_number: number });
    expect(events[0]?.sequence_number).toBe(2);
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed" } });
  });

  it("lets the openai SDK create in the background, retrieve, list input items, cancel and delete", async () => {
    const client = new OpenAI({
      apiKey: "x",
      baseURL: `${simulatedOrigin}/openai/v1`,
      fetch: (url: string | URL | Request, init?: RequestInit) => sim.fetch(new Request(url, init)),
      maxRetries: 0,
    });
    const queued = await client.responses.create({ model: "gpt-test", input: "Later, please.", background: true });
    expect(queued.status).toBe("queued");
    const cancelled = await client.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    const items = await client.responses.inputItems.list(queued.id);
    expect(items.data).toHaveLength(1);
    const other = await client.responses.create({ model: "gpt-test", input: "Now.", background: true });
    expect((await client.responses.retrieve(other.id)).status).toBe("completed");
    await client.responses.delete(other.id);
    await expect(client.responses.retrieve(other.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
