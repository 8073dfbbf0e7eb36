import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { failureReason } from "../../src/errors/failure-reason.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Markers that must never reach a log line: prompt text, and the keys the client and the server hold.
const promptMarker = "PROMPT-MARKER-7f3a-do-not-log";
const clientKey = "sk-client-MARKER-0123456789abcdef";
const serverKey = "sk-server-MARKER-0123456789abcdef";

let harness: GatewayUnderTest | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Line = Record<string, unknown>;

/** The gateway's lines so far, parsed (JSON, one object per line). */
function lines(): Line[] {
  return (harness?.logs ?? [])
    .join("")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Line);
}

/** The call line (`msg: "call"`) of `ref`; lines are written as the call settles, so it may take a moment. */
async function callLine(ref: string): Promise<Line> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const line = lines().find((candidate) => candidate.msg === "call" && candidate.ref === ref);
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`No call line for ${ref}.`);
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${harness!.gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

const refOf = (response: Response) => response.headers.get("x-promptgate-ref") ?? "";

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a call's log line", () => {
  it("names the model of a call the preflight refused", async () => {
    harness = await startGatewayUnderTest();
    const response = await post("/policies/investigation.bounded/openai/v1/chat/completions", {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: `${promptMarker} ${"x".repeat(25_000)}` }],
    });
    expect(response.status).toBe(400);
    expect(await callLine(refOf(response))).toMatchObject({
      decision: "rejected",
      error: "INVESTIGATION_PROMPT_LIMIT",
      model: "gpt-4.1-mini",
    });
  });

  it("names the model of a Gemini call the preflight refused, from its URL", async () => {
    harness = await startGatewayUnderTest();
    const response = await post(
      "/policies/investigation.bounded/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      {
        contents: [{ role: "user", parts: [{ text: "y".repeat(25_000) }] }],
      },
    );
    expect(response.status).toBe(400);
    expect(await callLine(refOf(response))).toMatchObject({ decision: "rejected", model: "gemini-2.5-flash" });
  });

  it("names the model of an invalid request whose body names one", async () => {
    harness = await startGatewayUnderTest();
    const response = await post("/anthropic/v1/messages", {
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      messages: "not a list of messages",
    });
    expect(response.status).toBe(400);
    expect(await callLine(refOf(response))).toMatchObject({ error: "INVALID_REQUEST", model: "claude-sonnet-4-5" });
  });

  it("gives ECONNREFUSED as the reason of a provider that refused the connection, and no key or prompt", async () => {
    const port = await closedPort();
    harness = await startGatewayUnderTest({
      PROMPTGATE_UPSTREAM_OPENAI: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: serverKey,
    });
    const response = await post("/openai/v1/chat/completions", {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: promptMarker }],
    });
    expect(response.status).toBe(502);
    expect(await callLine(refOf(response))).toMatchObject({
      error: "upstream",
      model: "gpt-4.1-mini",
      upstream_reason: "ECONNREFUSED",
    });
    const text = harness.logs.join("");
    for (const secret of [promptMarker, clientKey, serverKey]) expect(text).not.toContain(secret);
  });

  it("gives the status class as the reason of a provider's failed answer", async () => {
    harness = await startGatewayUnderTest();
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `overloaded, you sent ${promptMarker}` } }));
    });
    const response = await post("/openai/v1/chat/completions", {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: promptMarker }],
    });
    expect(response.status).toBe(503);
    expect(await callLine(refOf(response))).toMatchObject({ upstream_status: 503, upstream_reason: "http_5xx" });
    expect(harness.logs.join("")).not.toContain(promptMarker);
  });
});

describe("PROMPTGATE_LOG=debug", () => {
  it("adds the route, the policy, each check with its sizes and the provider request, without prompt text or keys", async () => {
    harness = await startGatewayUnderTest({ PROMPTGATE_LOG: "debug", GEMINI_API_KEY: serverKey });
    const response = await post(
      `/policies/investigation.bounded/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=${clientKey}`,
      { contents: [{ role: "user", parts: [{ text: promptMarker }] }] },
      { authorization: "" },
    );
    expect(response.status).toBe(200);
    const ref = refOf(response);
    await callLine(ref);
    const steps = lines().filter((line) => line.ref === ref && line.event === "debug");
    expect(steps.map((line) => [line.level, line.step])).toEqual([
      ["debug", "route"],
      ["debug", "policy"],
      ["debug", "check"],
      ["debug", "check"],
      ["debug", "upstream"],
    ]);
    const [route, policy, preflight, provider, upstream] = steps;
    expect(route).toMatchObject({
      surface: "gemini",
      method: "POST",
      route: "/v1beta/models/gemini-2.5-flash:generateContent",
      endpoint: "generate",
      policy_requested: "investigation.bounded",
    });
    expect(policy).toMatchObject({ policy: expect.stringMatching(/^investigation\.bounded@[0-9a-f]{12}$/) });
    expect(preflight).toMatchObject({
      check: "preflight",
      outcome: "within",
      enforced: true,
      prompt_size: { message_chars: promptMarker.length, limit_chars: 20_000, reserve_chars: 1_500 },
    });
    expect(provider).toMatchObject({ check: "provider", outcome: "within", enforced: true });
    expect(upstream).toMatchObject({
      method: "POST",
      url: `${harness.upstream.origin}/gemini/v1beta/models/gemini-2.5-flash:generateContent`,
      status: 200,
      duration_ms: expect.any(Number),
    });
    const text = harness.logs.join("");
    for (const secret of [promptMarker, clientKey, serverKey]) expect(text).not.toContain(secret);
    expect(text).not.toContain("key=");
  });

  it("tells which check refused a call and by how much", async () => {
    harness = await startGatewayUnderTest({ PROMPTGATE_LOG: "debug" });
    const response = await post("/policies/investigation.bounded/openai/v1/chat/completions", {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: `${promptMarker}${"z".repeat(19_000)}` }],
    });
    expect(response.status).toBe(400);
    const ref = refOf(response);
    await callLine(ref);
    const checks = lines().filter((line) => line.ref === ref && line.step === "check");
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({
      check: "preflight",
      outcome: "over_limit",
      enforced: true,
      prompt_size: { conservative_total_chars: expect.any(Number), limit_chars: 20_000 },
    });
    expect(lines().some((line) => line.ref === ref && line.step === "upstream")).toBe(false);
    expect(harness.logs.join("")).not.toContain(promptMarker);
  });

  it("is silent at the default level: only the call line", async () => {
    harness = await startGatewayUnderTest();
    const response = await post("/openai/v1/chat/completions", {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(response.status).toBe(200);
    const ref = refOf(response);
    await callLine(ref);
    expect(lines().filter((line) => line.ref === ref)).toHaveLength(1);
  });
});

describe("failureReason", () => {
  const coded = (message: string, code: string, cause?: unknown) =>
    Object.assign(new Error(message, cause === undefined ? {} : { cause }), { code });

  it("is the first error code of the cause chain", () => {
    const refused = coded(`connect ECONNREFUSED 127.0.0.1:9 ?key=${clientKey}`, "ECONNREFUSED");
    expect(failureReason(new TypeError("fetch failed", { cause: refused }))).toBe("ECONNREFUSED");
    expect(failureReason(coded("Headers Timeout Error", "UND_ERR_HEADERS_TIMEOUT"))).toBe("UND_ERR_HEADERS_TIMEOUT");
  });

  it("is the error's class where no code is given, and never its message", () => {
    expect(failureReason(new DOMException(`aborted ${promptMarker}`, "AbortError"))).toBe("AbortError");
    expect(failureReason(new Error(`failed sending ${promptMarker}`))).toBe("no_answer");
    expect(failureReason("a string")).toBe("no_answer");
  });

  it("ignores a code that is not an identifier", () => {
    expect(failureReason(coded("x", `sk-${clientKey} and more`))).toBe("no_answer");
  });
});
