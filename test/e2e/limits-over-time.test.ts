import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicSdk, type Outcome, openaiSdk, type SdkSurface, sdkSurfaces } from "../support/limits-clients.js";
import { type LimitsGateway, startLimitsGateway } from "../support/limits-gateway.js";
import { expectNativeBody } from "../support/native-errors.js";
import { copyPolicies, tempDatabase } from "../support/temp-state.js";

// Limits over time (contract section 10, docs/contract.md "Limits over time") through the real SDK clients against
// a Node gateway (SQLite store, policies folder, named keys) in front of the recording fake upstream. The gateway's
// clock is set by the test and follows real time from there (test/support/limits-gateway.ts: a started
// `startNodeGateway` takes no clock).

const adminKey = "limits-admin-key";

/** The shipped default policy renamed, with a `[limits]` table. */
function limitedPolicy(name: string, limits: string): string {
  return `${readFileSync("policies/default.toml", "utf8").replace(/^name = ".*"$/m, `name = "${name}"`)}\n[limits]\n${limits}\n`;
}

let gateway: LimitsGateway;

beforeAll(async () => {
  const policies = copyPolicies({
    "limits-rpm60.toml": limitedPolicy("limits.rpm60", "requests_per_minute = 60"),
  });
  gateway = await startLimitsGateway({
    PROMPTGATE_KEY_MODE: "keys",
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_DB: tempDatabase(),
    PROMPTGATE_POLICIES: policies,
    OPENAI_API_KEY: "sk-server-openai-limits-000111",
    GEMINI_API_KEY: "AIzaServerGeminiLimits000222",
    ANTHROPIC_API_KEY: "sk-ant-server-limits-333",
  });
});
afterAll(() => gateway?.close());
beforeEach(() => {
  gateway.upstream.received.length = 0;
  gateway.upstream.answerWith(undefined);
});

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gateway.url}/promptgate/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", ...init.headers },
  });
}

let keysMade = 0;
async function createKey(settings: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const response = await admin("/keys", {
    method: "POST",
    body: JSON.stringify({ name: `limits-${++keysMade}`, ...settings }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(201);
  return JSON.parse(text) as { id: string; key: string };
}

interface WindowUse {
  window: string;
  limit: number;
  used: number;
  reset_at: string | null;
  policy?: string;
}

async function windows(id: string): Promise<WindowUse[]> {
  const response = await admin(`/keys/${id}/limits`);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return (JSON.parse(text) as { windows: WindowUse[] }).windows;
}

async function windowUse(id: string, name: string): Promise<number> {
  const found = (await windows(id)).find((window) => window.window === name && window.policy === undefined);
  expect(found, name).toBeDefined();
  return (found as WindowUse).used;
}

/** Polls a key's window until it reads `expected` (a call's end is settled just after its answer), at most 2 s. */
async function eventuallyUsed(id: string, name: string, expected: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  let used = await windowUse(id, name);
  while (used !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    used = await windowUse(id, name);
  }
  expect(used, name).toBe(expected);
}

const sent = (surface: SdkSurface) =>
  gateway.upstream.received.filter((request) => request.url.startsWith(surface.upstreamPrefix)).length;

/**
 * The characters a call counts in a chars window: its provider check's `conservative_total_chars` (contract section
 * 10), read from its call record. The `x-promptgate-prompt-size` header holds the preflight's size, whose
 * `conservative_total_chars` adds the policy's `reserve_chars` (the provider check's reserve is 0): the header's
 * number is that plus the reserve, checked here too.
 */
async function countedChars(outcome: Outcome): Promise<number> {
  const header = outcome.headers.get("x-promptgate-prompt-size");
  expect(header).not.toBeNull();
  const preflight = JSON.parse(header as string) as { conservative_total_chars: number; reserve_chars: number };
  const ref = outcome.headers.get("x-promptgate-ref");
  const deadline = Date.now() + 2_000;
  let response = await admin(`/calls/${ref}`);
  while (response.status === 404 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    response = await admin(`/calls/${ref}`);
  }
  expect(response.status).toBe(200);
  const record = (await response.json()) as {
    provider_check: { conservative_total_chars: number; total_chars: number; reserve_chars: number };
  };
  const counted = record.provider_check.conservative_total_chars;
  expect(preflight.conservative_total_chars).toBe(
    counted - record.provider_check.reserve_chars + preflight.reserve_chars,
  );
  return counted;
}

/** Asserts a limit's 429 in the surface's native shape and returns its `promptgate.limit`. */
function expectLimitRefusal(
  surface: SdkSurface,
  outcome: Outcome,
  code: "RATE_LIMITED" | "BUDGET_EXHAUSTED",
): { window: string; limit: number; used: number; retry_after_seconds: number } {
  expect(outcome.ok, JSON.stringify(outcome.body)).toBe(false);
  expect(outcome.status).toBe(429);
  const retryAfter = outcome.headers.get("retry-after");
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  const promptgate =
    surface.name === "gemini"
      ? expectGeminiLimitBody(outcome, code)
      : expectNativeBody[surface.name](
          outcome.body,
          { status: outcome.status, headers: outcome.headers } as Response,
          code,
        );
  expect(promptgate).toMatchObject({ code, retryable: code === "RATE_LIMITED" });
  const limit = promptgate.limit as { window: string; limit: number; used: number; retry_after_seconds: number };
  expect(limit).toEqual({
    window: expect.any(String),
    limit: expect.any(Number),
    used: expect.any(Number),
    retry_after_seconds: Number(retryAfter),
  });
  if (code === "BUDGET_EXHAUSTED") expect(outcome.headers.get("x-should-retry")).toBe("false");
  else expect(outcome.headers.get("x-should-retry")).not.toBe("false");
  return limit;
}

/**
 * Gemini's native 429: `{error: {code, status, message, details, promptgate}}`, the gateway's code the reason of an
 * ErrorInfo; a limit's refusal adds Google's RetryInfo with the same delay as Retry-After.
 */
function expectGeminiLimitBody(outcome: Outcome, code: string): Record<string, unknown> {
  const error = (outcome.body as { error: Record<string, unknown> }).error;
  expect(error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", message: expect.any(String) });
  const details = error.details as Record<string, unknown>[];
  expect(details).toContainEqual(
    expect.objectContaining({ "@type": expect.stringContaining("ErrorInfo"), reason: code, domain: "promptgate" }),
  );
  for (const detail of details) {
    if (String(detail["@type"]).includes("RetryInfo"))
      expect(detail.retryDelay).toBe(`${outcome.headers.get("retry-after")}s`);
    else expect(detail["@type"]).toContain("ErrorInfo");
  }
  return error.promptgate as Record<string, unknown>;
}

const ms = (iso: string) => Date.parse(iso);

describe.each(sdkSurfaces)("limits over time through the $name SDK", (surface) => {
  it("a policy's requests_per_minute = 60: the 61st call is 429 RATE_LIMITED, and the upstream got exactly 60", async () => {
    const { key } = await createKey({ policies: ["limits.rpm60"] });
    gateway.clock.set("2026-12-08T10:00:05.000Z");
    for (let batch = 0; batch < 4; batch++) {
      const outcomes = await Promise.all(
        Array.from({ length: 15 }, () => surface.send(gateway.url, key, { policy: "limits.rpm60" })),
      );
      for (const outcome of outcomes) expect(outcome.ok, JSON.stringify(outcome.body)).toBe(true);
    }
    expect(sent(surface)).toBe(60);
    const refused = await surface.send(gateway.url, key, { policy: "limits.rpm60" });
    const limit = expectLimitRefusal(surface, refused, "RATE_LIMITED");
    const secondsLeft = (ms("2026-12-08T10:01:00.000Z") - gateway.clock.now().getTime()) / 1000;
    expect(limit).toEqual({
      window: "requests_per_minute",
      limit: 60,
      used: 60,
      retry_after_seconds: expect.any(Number),
    });
    // Seconds until the UTC minute ends, as the gateway's clock counts them.
    expect(limit.retry_after_seconds).toBeGreaterThanOrEqual(Math.floor(secondsLeft));
    expect(limit.retry_after_seconds).toBeLessThanOrEqual(55);
    expect(refused.attempts).toHaveLength(1);
    expect(sent(surface)).toBe(60);
  });

  it("a chars_per_day budget refuses exactly the call that would cross it, BUDGET_EXHAUSTED, and a smaller one still fits", async () => {
    gateway.clock.set("2026-12-08T12:00:00.000Z");
    const big = "A longer question, to measure a call that fills most of the budget. ".repeat(4);
    const small = "Short?";
    const measurer = await createKey({});
    const bigChars = await countedChars(await surface.send(gateway.url, measurer.key, { text: big }));
    const smallChars = await countedChars(await surface.send(gateway.url, measurer.key, { text: small }));
    expect(smallChars).toBeLessThan(bigChars);
    const budget = 2 * bigChars + smallChars;
    const { key } = await createKey({ limits: { chars_per_day: budget } });
    gateway.upstream.received.length = 0;

    const first = await surface.send(gateway.url, key, { text: big });
    expect(first.ok).toBe(true);
    expect(first.headers.get("x-promptgate-remaining-chars")).toBe(String(budget - bigChars));
    const second = await surface.send(gateway.url, key, { text: big });
    expect(second.ok).toBe(true);
    expect(second.headers.get("x-promptgate-remaining-chars")).toBe(String(smallChars));

    // The third big call would cross the budget: refused, though the budget is not yet spent.
    const crossing = await surface.send(gateway.url, key, { text: big });
    const limit = expectLimitRefusal(surface, crossing, "BUDGET_EXHAUSTED");
    expect(limit).toMatchObject({ window: "chars_per_day", limit: budget, used: 2 * bigChars });
    // Seconds until the UTC day ends, as the gateway's clock counts them (12 h).
    expect(limit.retry_after_seconds).toBeGreaterThan(12 * 3600 - 60);
    expect(limit.retry_after_seconds).toBeLessThanOrEqual(12 * 3600);
    expect(sent(surface)).toBe(2);

    // A call that fits exactly is admitted, and spends the budget to 0; the one after is refused.
    const fitting = await surface.send(gateway.url, key, { text: small });
    expect(fitting.ok, JSON.stringify(fitting.body)).toBe(true);
    expect(fitting.headers.get("x-promptgate-remaining-chars")).toBe("0");
    const after = await surface.send(gateway.url, key, { text: small });
    expect(expectLimitRefusal(surface, after, "BUDGET_EXHAUSTED")).toMatchObject({
      window: "chars_per_day",
      used: budget,
    });
    expect(sent(surface)).toBe(3);
  });

  it("the remaining headers count down after each call, and x-promptgate-remaining-chars falls by each call's conservative_total_chars", async () => {
    gateway.clock.set("2026-12-08T13:00:10.000Z");
    const { key } = await createKey({ limits: { requests_per_minute: 10, chars_per_day: 100_000 } });
    let chars = 100_000;
    const texts = ["One.", "Two, a little longer.", "Three, longer still than the second one was."];
    for (const [index, text] of texts.entries()) {
      const outcome = await surface.send(gateway.url, key, { text });
      expect(outcome.ok, JSON.stringify(outcome.body)).toBe(true);
      chars -= await countedChars(outcome);
      expect(outcome.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(outcome.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - index));
      // 50 s to the minute's end (less the test's own real time).
      expect(outcome.headers.get("x-ratelimit-reset-requests")).toMatch(/^(50|49|48)s$/);
      expect(outcome.headers.get("x-promptgate-remaining-chars")).toBe(String(chars));
      // No token limit: no token headers.
      expect(outcome.headers.get("x-ratelimit-remaining-tokens")).toBeNull();
    }
  });

  it("tokens_per_day: a call is reconciled from the provider's reported usage, read through the admin limits route", async () => {
    gateway.clock.set("2026-12-08T14:00:00.000Z");
    const { id, key } = await createKey({ limits: { tokens_per_day: 1_000_000 } });
    gateway.upstream.answerWith((_request, response) => answerJson(response, 200, surface.answer(1234, 56)));
    const outcome = await surface.send(gateway.url, key);
    expect(outcome.ok, JSON.stringify(outcome.body)).toBe(true);
    // The answer's header counts the call's estimate (admitted before the usage is known).
    const estimate = 1_000_000 - Number(outcome.headers.get("x-ratelimit-remaining-tokens"));
    expect(estimate).toBeGreaterThan(0);
    expect(outcome.headers.get("x-ratelimit-limit-tokens")).toBe("1000000");
    await eventuallyUsed(id, "tokens_per_day", 1234 + 56);
    gateway.upstream.answerWith((_request, response) => answerJson(response, 200, surface.answer(100, 7)));
    const next = await surface.send(gateway.url, key);
    expect(next.ok).toBe(true);
    await eventuallyUsed(id, "tokens_per_day", 1234 + 56 + 107);
  });

  it("concurrent = 1: a second call while the first is held is 429 RATE_LIMITED with Retry-After 1; after it ends a call is admitted", async () => {
    gateway.clock.set("2026-12-08T16:00:00.000Z");
    const { key } = await createKey({ limits: { concurrent: 1 } });
    let release = () => {};
    const releasing = new Promise<void>((resolve) => {
      release = resolve;
    });
    gateway.upstream.answerWith((_request, response) => {
      void releasing.then(() => answerJson(response, 200, surface.answer(10, 5)));
    });
    const first = surface.send(gateway.url, key);
    const until = Date.now() + 2_000;
    while (sent(surface) === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sent(surface)).toBe(1);

    const second = await surface.send(gateway.url, key);
    const limit = expectLimitRefusal(surface, second, "RATE_LIMITED");
    expect(limit).toEqual({ window: "concurrent", limit: 1, used: 1, retry_after_seconds: 1 });
    expect(second.headers.get("retry-after")).toBe("1");
    expect(sent(surface)).toBe(1);

    release();
    const ended = await first;
    expect(ended.ok, JSON.stringify(ended.body)).toBe(true);
    gateway.upstream.answerWith(undefined);
    const third = await surface.send(gateway.url, key);
    expect(third.ok, JSON.stringify(third.body)).toBe(true);
    expect(sent(surface)).toBe(2);
  });
});

describe.each([openaiSdk, anthropicSdk])("the $name SDK's own retries honour Retry-After", (surface) => {
  it("a call refused one second before the minute ends is retried by the SDK after the window rolled over, and succeeds", async () => {
    const { key } = await createKey({ limits: { requests_per_minute: 2 } });
    gateway.clock.set("2026-12-08T17:00:59.000Z");
    for (let call = 0; call < 2; call++) expect((await surface.send(gateway.url, key)).ok).toBe(true);
    const retried = await surface.send(gateway.url, key, { retries: true });
    expect(retried.ok, JSON.stringify(retried.body)).toBe(true);
    expect(retried.attempts.map((attempt) => attempt.status)).toEqual([429, 200]);
    const [refused, admitted] = retried.attempts as [Outcome["attempts"][number], Outcome["attempts"][number]];
    expect(refused.headers.get("retry-after")).toBe("1");
    // The SDK waited (about) the second it was told before it asked again.
    expect(admitted.at - refused.at).toBeGreaterThanOrEqual(900);
    expect(gateway.clock.now().getTime()).toBeGreaterThan(ms("2026-12-08T17:01:00.000Z"));
    // The retry is the new minute's first call.
    expect(admitted.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    expect(sent(surface)).toBe(3);
  });
});

describe("several windows at once", () => {
  it("a burst of 75 calls at once under requests_per_minute = 60: exactly 60 admitted and sent, 15 refused", async () => {
    gateway.clock.set("2026-12-08T19:30:05.000Z");
    const { key } = await createKey({ policies: ["limits.rpm60"] });
    const outcomes = await Promise.all(
      Array.from({ length: 75 }, () => openaiSdk.send(gateway.url, key, { policy: "limits.rpm60" })),
    );
    const refused = outcomes.filter((outcome) => !outcome.ok);
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(60);
    expect(refused).toHaveLength(15);
    for (const outcome of refused) {
      expect(expectLimitRefusal(openaiSdk, outcome, "RATE_LIMITED")).toMatchObject({
        window: "requests_per_minute",
        limit: 60,
        used: 60,
      });
    }
    expect(sent(openaiSdk)).toBe(60);
  });

  it("a key's limits count across its policies and a policy's per principal; a refused call counts in no window", async () => {
    gateway.clock.set("2026-12-08T19:00:00.000Z");
    const { id, key } = await createKey({
      policies: ["default", "limits.rpm60"],
      limits: { requests_per_minute: 2 },
    });
    const underDefault = await openaiSdk.send(gateway.url, key, { policy: "default" });
    expect(underDefault.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    // Under limits.rpm60 the key's window (1 left) is tighter than the policy's (59 left).
    const underLimited = await openaiSdk.send(gateway.url, key, { policy: "limits.rpm60" });
    expect(underLimited.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(underLimited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const refused = await openaiSdk.send(gateway.url, key, { policy: "default" });
    expect(expectLimitRefusal(openaiSdk, refused, "RATE_LIMITED")).toMatchObject({
      window: "requests_per_minute",
      limit: 2,
      used: 2,
    });
    expect(sent(openaiSdk)).toBe(2);
    expect(await windows(id)).toEqual([
      { window: "requests_per_minute", limit: 2, used: 2, reset_at: "2026-12-08T19:01:00.000Z" },
      {
        window: "requests_per_minute",
        limit: 60,
        used: 1,
        reset_at: "2026-12-08T19:01:00.000Z",
        policy: "limits.rpm60",
      },
    ]);
  });

  it("of several full windows the refusal names the one with the longest wait", async () => {
    gateway.clock.set("2026-12-08T20:00:00.000Z");
    const { key } = await createKey({ limits: { requests_per_minute: 1, requests_per_day: 1 } });
    expect((await anthropicSdk.send(gateway.url, key)).ok).toBe(true);
    const refused = await anthropicSdk.send(gateway.url, key);
    const limit = expectLimitRefusal(anthropicSdk, refused, "RATE_LIMITED");
    expect(limit).toMatchObject({ window: "requests_per_day", limit: 1, used: 1 });
    expect(limit.retry_after_seconds).toBeGreaterThan(4 * 3600 - 60);
    expect(limit.retry_after_seconds).toBeLessThanOrEqual(4 * 3600);
  });

  it("a tokens_per_day window gives the three token headers, its reset counted to the UTC day's end", async () => {
    gateway.clock.set("2026-12-08T22:30:00.000Z");
    const { key } = await createKey({ limits: { tokens_per_day: 5_000 } });
    const outcome = await openaiSdk.send(gateway.url, key);
    expect(outcome.ok).toBe(true);
    expect(outcome.headers.get("x-ratelimit-limit-tokens")).toBe("5000");
    expect(Number(outcome.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(5_000);
    expect(outcome.headers.get("x-ratelimit-reset-tokens")).toMatch(/^1h(29m\d+s|30m0s)$/);
    expect(outcome.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });
});

describe("a provider's own x-ratelimit-* headers", () => {
  const providerHeaders = {
    "x-ratelimit-limit-requests": "5000",
    "x-ratelimit-remaining-requests": "4999",
    "x-ratelimit-reset-requests": "12ms",
    "x-ratelimit-limit-tokens": "800000",
    "x-ratelimit-remaining-tokens": "799000",
  };
  beforeEach(() => {
    gateway.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", ...providerHeaders });
      response.end(JSON.stringify(openaiSdk.answer(10, 5)));
    });
  });

  it("pass through on OpenAI chat without a gateway limit", async () => {
    const { key } = await createKey({});
    const outcome = await openaiSdk.send(gateway.url, key);
    expect(outcome.ok).toBe(true);
    for (const [name, value] of Object.entries(providerHeaders)) expect(outcome.headers.get(name), name).toBe(value);
    expect(outcome.headers.get("x-promptgate-remaining-chars")).toBeNull();
  });

  it("are replaced on OpenAI chat under a gateway limit, none of the provider's left", async () => {
    gateway.clock.set("2026-12-08T18:00:00.000Z");
    const { key } = await createKey({ limits: { requests_per_minute: 10 } });
    const outcome = await openaiSdk.send(gateway.url, key);
    expect(outcome.ok).toBe(true);
    expect(outcome.headers.get("x-ratelimit-limit-requests")).toBe("10");
    expect(outcome.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    expect(outcome.headers.get("x-ratelimit-reset-requests")).toBe("1m0s");
    expect(outcome.headers.get("x-ratelimit-limit-tokens")).toBeNull();
    expect(outcome.headers.get("x-ratelimit-remaining-tokens")).toBeNull();
  });

  it("are replaced under a chars-only gateway limit too", async () => {
    gateway.clock.set("2026-12-08T18:00:00.000Z");
    const { key } = await createKey({ limits: { chars_per_day: 100_000 } });
    const outcome = await openaiSdk.send(gateway.url, key);
    expect(outcome.ok).toBe(true);
    expect(outcome.headers.get("x-promptgate-remaining-chars")).toBe(String(100_000 - (await countedChars(outcome))));
    for (const name of Object.keys(providerHeaders)) expect(outcome.headers.get(name), name).toBeNull();
  });
});

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

describe("a streamed answer's reported usage", () => {
  it("reconciles tokens_per_day with an Anthropic stream's usage (message_start input, message_delta output)", async () => {
    gateway.clock.set("2026-12-08T21:00:00.000Z");
    const { id, key } = await createKey({ limits: { tokens_per_day: 1_000_000 } });
    const events: [string, unknown][] = [
      [
        "message_start",
        {
          type: "message_start",
          message: {
            id: "msg_stream",
            type: "message",
            role: "assistant",
            model: "claude-haiku-4-5",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 40, output_tokens: 1 },
          },
        },
      ],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      [
        "message_delta",
        {
          type: "message_delta",
          delta: { stop_reason: "end_turn", stop_sequence: null },
          usage: { output_tokens: 25 },
        },
      ],
      ["message_stop", { type: "message_stop" }],
    ];
    gateway.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (const [event, data] of events) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      response.end();
    });
    const client = new Anthropic({ apiKey: key, baseURL: `${gateway.url}/anthropic`, maxRetries: 0 });
    const stream = client.messages.stream({
      model: "claude-haiku-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: "Count this stream." }],
    });
    const final = await stream.finalMessage();
    expect(final.usage.output_tokens).toBe(25);
    await eventuallyUsed(id, "tokens_per_day", 40 + 25);
  });
});

describe("Anthropic's own anthropic-ratelimit-* headers", () => {
  const providerHeaders = {
    "anthropic-ratelimit-requests-limit": "4000",
    "anthropic-ratelimit-requests-remaining": "3999",
  };
  beforeEach(() => {
    gateway.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", ...providerHeaders });
      response.end(JSON.stringify(anthropicSdk.answer(10, 5)));
    });
  });

  it("pass through without a gateway limit, and under one the gateway's x-ratelimit-* come beside them", async () => {
    gateway.clock.set("2026-12-08T18:30:00.000Z");
    const free = await anthropicSdk.send(gateway.url, (await createKey({})).key);
    for (const [name, value] of Object.entries(providerHeaders)) expect(free.headers.get(name), name).toBe(value);
    const limited = await anthropicSdk.send(
      gateway.url,
      (await createKey({ limits: { requests_per_minute: 10 } })).key,
    );
    expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    // The contract replaces the provider's x-ratelimit-* only; Anthropic's own names are not among them.
    for (const [name, value] of Object.entries(providerHeaders)) expect(limited.headers.get(name), name).toBe(value);
  });
});
