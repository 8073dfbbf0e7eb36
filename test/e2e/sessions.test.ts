import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { heldOutput } from "../support/held-output.js";
import { type Gateway, gatewayOn, hour, refusal, stores } from "../support/session-gateway.js";

// Follow-up sessions over previous_response_id (issue 16), through the openai SDK against the gateway's app with
// the simulated providers and a fake clock, on the memory store and on SQLite.

const responsesSent = (gateway: Gateway) => gateway.sent.filter((request) => request.path.endsWith("/responses"));

/** Waits (real time, at most 5 s) until `count` Responses calls reached the provider. */
async function sentCount(gateway: Gateway, count: number): Promise<void> {
  for (let attempt = 0; attempt < 500 && responsesSent(gateway).length < count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(responsesSent(gateway)).toHaveLength(count);
}

describe.each(stores)("follow-up sessions on the %s store", (_name, makeStore) => {
  it("continues a stored response, counting its history, and inherits the model it omits", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "a".repeat(200) });
    const next = await client.responses
      .create({
        input: "and then?",
        previous_response_id: first.id,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse();
    const size = JSON.parse(next.response.headers.get("x-promptgate-prompt-size") ?? "{}");
    expect(size.cache_prefix_chars).toBe(200 + heldOutput(first));
    expect(responsesSent(gateway).at(-1)?.body).toMatchObject({ model: "gpt-4.1", previous_response_id: first.id });
  });

  it("answers an unknown id with OpenAI's exact previous_response_not_found body, sending nothing", async () => {
    const gateway = await gatewayOn(makeStore);
    const response = await gateway.app.fetch(
      new Request("http://gateway.test/openai/v1/responses", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-alice" },
        body: JSON.stringify({ model: "gpt-4.1", input: "hi", previous_response_id: "resp_nobody" }),
      }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: Record<string, unknown> & { promptgate: unknown } };
    const { promptgate, ...native } = body.error;
    expect(native).toEqual({
      message: "Previous response with id 'resp_nobody' not found.",
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
    expect(promptgate).toMatchObject({ code: "SESSION_NOT_FOUND", retryable: false });
    expect(gateway.sent).toEqual([]);
  });

  it("answers another principal's id exactly as an unknown one (pass-through: another provider key)", async () => {
    const gateway = await gatewayOn(makeStore);
    const mine = await gateway.client({ key: "sk-alice" }).responses.create({ model: "gpt-4.1", input: "secret" });
    const sentBefore = gateway.sent.length;
    const theirs = await refusal(
      gateway.client({ key: "sk-mallory" }).responses.create({
        model: "gpt-4.1",
        input: "what did they say?",
        previous_response_id: mine.id,
      }),
    );
    expect(theirs).toEqual({
      status: 400,
      code: "previous_response_not_found",
      param: "previous_response_id",
      promptgate: "SESSION_NOT_FOUND",
    });
    expect(gateway.sent.length).toBe(sentBefore);
  });

  it("never hands one principal's session to another when a provider gives the same id twice", async () => {
    const gateway = await gatewayOn(makeStore);
    // The simulated provider derives a response's id from its request: the same request gives the same id.
    const request = { model: "gpt-4.1", input: "the very same words" };
    const mine = await gateway.client({ key: "sk-alice" }).responses.create(request);
    const theirs = await gateway.client({ key: "sk-mallory" }).responses.create(request);
    expect(theirs.id).toBe(mine.id);
    const refused = await refusal(
      gateway.client({ key: "sk-mallory" }).responses.create({ ...request, previous_response_id: mine.id }),
    );
    expect(refused.promptgate).toBe("SESSION_NOT_FOUND");
    await gateway.client({ key: "sk-alice" }).responses.create({ ...request, previous_response_id: mine.id });
    expect(gateway.records.find((record) => record.internal_error !== undefined)?.internal_error).toMatchObject({
      during: "remember-prefix",
    });
  });

  it("binds a session to the gateway key that started it, never to the provider key all calls share", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: "pg-alice,pg-bob" });
    const mine = await gateway.client({ key: "pg-alice" }).responses.create({ model: "gpt-4.1", input: "secret" });
    const theirs = await refusal(
      gateway
        .client({ key: "pg-bob" })
        .responses.create({ model: "gpt-4.1", input: "go on", previous_response_id: mine.id }),
    );
    expect(theirs.promptgate).toBe("SESSION_NOT_FOUND");
    await gateway
      .client({ key: "pg-alice" })
      .responses.create({ model: "gpt-4.1", input: "go on", previous_response_id: mine.id });
  });

  it("lets only the session's principal retrieve, list or delete a stored response", async () => {
    const gateway = await gatewayOn(makeStore);
    const mine = await gateway.client({ key: "sk-alice" }).responses.create({ model: "gpt-4.1", input: "secret" });
    const mallory = gateway.client({ key: "sk-mallory" });
    const sentBefore = gateway.sent.length;
    for (const attempt of [
      () => mallory.responses.retrieve(mine.id),
      () => mallory.responses.inputItems.list(mine.id),
      () => mallory.responses.delete(mine.id),
    ]) {
      expect(await refusal(attempt())).toMatchObject({ status: 404 });
    }
    expect(gateway.sent.length).toBe(sentBefore);
    const retrieved = await gateway.client({ key: "sk-alice" }).responses.retrieve(mine.id);
    expect(retrieved.id).toBe(mine.id);
  });

  it("with gateway keys, never forwards a retrieval of a response the gateway did not see made", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: "pg-alice" });
    const unknown = await refusal(gateway.client({ key: "pg-alice" }).responses.retrieve("resp_made_elsewhere"));
    expect(unknown).toMatchObject({ status: 404 });
    expect(gateway.sent).toEqual([]);
  });

  it.each([
    ["U+0000", "gpt-4.1\u0000"],
    ["a lone surrogate", "gpt-4.1\ud800"],
  ])("continues a session whose model name holds %s, pinning that name", async (_what, model) => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model, input: "hello" });
    const next = await client.responses.create({ model, input: "and then?", previous_response_id: first.id });
    const omitted = await client.responses.create({
      input: "and now?",
      previous_response_id: next.id,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(responsesSent(gateway).at(-1)?.body).toMatchObject({ model, previous_response_id: next.id });
    expect(omitted.id).toBeTruthy();
    const changed = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "other", previous_response_id: omitted.id }),
    );
    expect(changed.promptgate).toBe("SESSION_SETTINGS_CHANGED");
  });

  it("expires a session after 24 hours without a turn", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    gateway.clock.now += 24 * hour;
    const kept = await client.responses.create({
      model: "gpt-4.1",
      input: "still here",
      previous_response_id: first.id,
    });
    gateway.clock.now += 24 * hour + 1;
    const expired = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "too late", previous_response_id: kept.id }),
    );
    expect(expired).toMatchObject({ status: 400, code: "previous_response_not_found", promptgate: "SESSION_EXPIRED" });
  });

  it("still answers SESSION_EXPIRED after a sweep, for 7 days past the expiry, then SESSION_NOT_FOUND", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    const startedAt = gateway.clock.now;
    const turn = () =>
      refusal(client.responses.create({ model: "gpt-4.1", input: "late", previous_response_id: first.id }));
    gateway.clock.now = startedAt + 24 * hour + 1;
    await gateway.sweep();
    expect(await turn()).toMatchObject({ status: 400, promptgate: "SESSION_EXPIRED" });
    gateway.clock.now = startedAt + (24 + 7 * 24) * hour;
    await gateway.sweep();
    expect((await turn()).promptgate).toBe("SESSION_EXPIRED");
    gateway.clock.now += 1;
    await gateway.sweep();
    expect((await turn()).promptgate).toBe("SESSION_NOT_FOUND");
    expect(responsesSent(gateway)).toHaveLength(1);
  });

  it("expires a session 7 days after its first turn, however active", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    let last = await client.responses.create({ model: "gpt-4.1", input: "day 0" });
    for (let day = 1; day <= 7; day++) {
      gateway.clock.now += 24 * hour - 1;
      last = await client.responses.create({ model: "gpt-4.1", input: `day ${day}`, previous_response_id: last.id });
    }
    gateway.clock.now += 8 * hour;
    const expired = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "day 8", previous_response_id: last.id }),
    );
    expect(expired.promptgate).toBe("SESSION_EXPIRED");
  });

  it("takes its lifetime from the policy's [session] table", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "session.short" });
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    gateway.clock.now += hour + 1;
    const expired = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "later", previous_response_id: first.id }),
    );
    expect(expired.promptgate).toBe("SESSION_EXPIRED");
  });

  it("pins model, reasoning level and profile: a change is SESSION_SETTINGS_CHANGED naming it, an omission inherits", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ label: "wiki_assistant" });
    const first = await client.responses.create({ model: "o4-mini", input: "hello", reasoning: { effort: "low" } });
    const continued = { input: "next", previous_response_id: first.id };

    const model = await refusal(client.responses.create({ ...continued, model: "gpt-4.1" }));
    expect(model).toMatchObject({ status: 400, code: "SESSION_SETTINGS_CHANGED", param: "model" });
    const reasoning = await refusal(
      client.responses.create({ ...continued, model: "o4-mini", reasoning: { effort: "high" } }),
    );
    expect(reasoning).toMatchObject({ code: "SESSION_SETTINGS_CHANGED", param: "reasoning.effort" });
    const profile = await refusal(
      gateway.client({ label: "site_locator" }).responses.create({ ...continued, model: "o4-mini" }),
    );
    expect(profile).toMatchObject({ code: "SESSION_SETTINGS_CHANGED", param: "x-promptgate-call" });

    // A continuation without model, reasoning or label runs with the session's.
    await gateway.client().responses.create(continued as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(responsesSent(gateway).at(-1)?.body).toMatchObject({ model: "o4-mini", reasoning: { effort: "low" } });
    expect(gateway.records.at(-1)?.call_label).toBe("wiki_assistant");
  });

  it("never continues a session across a policy change (a selection change)", async () => {
    const gateway = await gatewayOn(makeStore);
    const first = await gateway.client().responses.create({ model: "gpt-4.1", input: "hello" });
    const moved = await refusal(
      gateway
        .client({ policy: "case.interpretation" })
        .responses.create({ model: "gpt-4.1", input: "next", previous_response_id: first.id }),
    );
    expect(moved).toMatchObject({ code: "SESSION_SETTINGS_CHANGED", param: "previous_response_id" });
  });

  it("never continues a session after its model's routing entry changed (a selection change)", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gemini-2.5-flash", input: "hello" });
    gateway.useModels('[model."gemini-2.5-flash"]\nprovider = "gemini"\nupstream_model = "gemini-2.5-pro"\n');
    const moved = await refusal(
      client.responses.create({ model: "gemini-2.5-flash", input: "next", previous_response_id: first.id }),
    );
    expect(moved).toMatchObject({ code: "SESSION_SETTINGS_CHANGED", param: "previous_response_id" });
    // A new session runs on the new entry.
    await client.responses.create({ model: "gemini-2.5-flash", input: "again" });
  });

  it("runs two turns of one session one after the other, forks included", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    const release = gateway.gate();
    const one = client.responses.create({ model: "gpt-4.1", input: "fork one", previous_response_id: first.id });
    const two = client.responses.create({ model: "gpt-4.1", input: "fork two", previous_response_id: first.id });
    await sentCount(gateway, 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // One fork reached the provider; the other waits for it to end.
    expect(responsesSent(gateway)).toHaveLength(2);
    release();
    await Promise.all([one, two]);
    const forks = responsesSent(gateway).slice(1);
    expect(forks.map((request) => request.body.input).sort()).toEqual(["fork one", "fork two"]);
  });

  it("fails a turn that waits past the queue deadline with timeout, sending nothing", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "session.short" });
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    const release = gateway.gate();
    const running = client.responses.create({ model: "gpt-4.1", input: "slow", previous_response_id: first.id });
    await sentCount(gateway, 2);
    const waiting = client.responses.create({ model: "gpt-4.1", input: "queued", previous_response_id: first.id });
    // The clock runs past the queue deadline (1 s under session.short) however late the turn began to wait.
    const ticking = setInterval(() => {
      gateway.clock.now += 1_001;
    }, 20);
    const timedOut = await refusal(waiting).finally(() => clearInterval(ticking));
    expect(timedOut).toMatchObject({ status: 504, promptgate: "timeout" });
    release();
    await running;
    expect(responsesSent(gateway).map((request) => request.body.input)).toEqual(["hello", "slow"]);
  });

  it("refuses a session start or turn over the token caps with SESSION_TOKEN_LIMIT, sending nothing", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client({ policy: "session.capped" });
    const perToken = 5; // the default chars_per_token, which case.interpretation keeps
    const start = await refusal(client.responses.create({ model: "gpt-4.1", input: "x".repeat(101 * perToken) }));
    expect(start).toMatchObject({ status: 400, code: "SESSION_TOKEN_LIMIT" });
    expect(gateway.sent).toEqual([]);
    // Not stored, so no session starts: the start cap does not apply.
    await client.responses.create({ model: "gpt-4.1", input: "x".repeat(101 * perToken), store: false });

    const first = await client.responses.create({ model: "gpt-4.1", input: "x".repeat(90 * perToken) });
    const total = await refusal(
      client.responses.create({ model: "gpt-4.1", input: "y".repeat(60 * perToken), previous_response_id: first.id }),
    );
    expect(total).toMatchObject({ code: "SESSION_TOKEN_LIMIT" });
    expect(gateway.records.at(-1)).toMatchObject({ decision: "rejected", error: "SESSION_TOKEN_LIMIT" });
  });

  it("refuses previous_response_id together with conversation", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    const both = await refusal(
      client.responses.create({
        model: "gpt-4.1",
        input: "next",
        previous_response_id: first.id,
        conversation: "conv_1",
      }),
    );
    expect(both).toMatchObject({ status: 400, code: "INVALID_REQUEST", param: "conversation" });
  });

  it("holds the history of a model routed to a provider without stored state, and rebuilds it into the next call", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const first = await client.responses.create({ model: "gemini-2.5-flash", input: "Remember the word KESTREL." });
    expect(first.id).toMatch(/^resp_/);
    const second = await client.responses.create({
      model: "gemini-2.5-flash",
      input: "Which word?",
      previous_response_id: first.id,
    });
    const third = await client.responses
      .create({
        input: "Once more.",
        previous_response_id: second.id,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse();
    const calls = gateway.sent.filter((request) => request.path.includes(":generateContent"));
    expect(calls).toHaveLength(3);
    const texts = JSON.stringify(calls[2]?.body.contents);
    for (const said of [
      "Remember the word KESTREL.",
      first.output_text,
      "Which word?",
      second.output_text,
      "Once more.",
    ]) {
      expect(texts).toContain(JSON.stringify(said).slice(1, -1));
    }
    const size = JSON.parse(third.response.headers.get("x-promptgate-prompt-size") ?? "{}");
    const history = ["Remember the word KESTREL.", first.output_text, "Which word?", second.output_text];
    expect(size.message_chars).toBeGreaterThanOrEqual(
      history.reduce((sum, text) => sum + Array.from(text).length, 0) + "Once more.".length,
    );
  });

  it("holds a streamed routed turn's history too", async () => {
    const gateway = await gatewayOn(makeStore);
    const client = gateway.client();
    const stream = await client.responses.create({ model: "gemini-2.5-flash", input: "Streamed first.", stream: true });
    let id: string | undefined;
    let text = "";
    for await (const event of stream) {
      if (event.type === "response.completed") {
        id = event.response.id;
        text = event.response.output_text ?? "";
      }
    }
    expect(id).toMatch(/^resp_/);
    await client.responses.create({ model: "gemini-2.5-flash", input: "Then?", previous_response_id: id });
    const last = gateway.sent.filter((request) => request.path.includes(":generateContent")).at(-1);
    expect(JSON.stringify(last?.body.contents)).toContain("Streamed first.");
    if (text !== "") expect(JSON.stringify(last?.body.contents)).toContain(JSON.stringify(text).slice(1, -1));
  });
});
