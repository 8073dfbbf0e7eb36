/**
 * Soak test (outside `npm test`): `npm run soak -- --minutes 2 [--concurrency 8]`.
 *
 * Runs mixed load against a gateway on loopback for the given minutes: accepted calls on the three
 * surfaces (plain and streamed), oversize bodies, invalid bodies, and faults from a fake upstream
 * (error bodies, reset connections, malformed JSON, cut streams, a provider that hangs past a
 * one-second policy deadline). Every 10 s it prints the answers by class and the process's memory;
 * at the end, whether RSS stayed flat: within 15% of its value after the first minute (or after
 * half the run, for runs shorter than two minutes).
 */
import type { ServerResponse } from "node:http";
import { startNodeGateway } from "../src/runtime/node/node-gateway.js";
import { startFakeUpstream } from "../test/support/fake-upstream.js";
import { copyPolicies, tempDatabase } from "../test/support/temp-state.js";

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(process.argv[index + 1]);
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const minutes = argument("minutes", 2);
const concurrency = argument("concurrency", 8);
const durationMs = minutes * 60_000;
const baselineAtMs = Math.min(60_000, durationMs / 2);
const maxBodyBytes = 100_000;

const soakPolicy = `name = "soak.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 1
`;

type Fault = "ok" | "429" | "500" | "503" | "401" | "reset" | "malformed" | "cut-stream" | "hang";

const upstream = await startFakeUpstream();
/** The fake upstream reads the fault to inject from the prompt text: `FAULT:<name>`. */
function answer(body: string, response: ServerResponse): boolean {
  const fault = /FAULT:([a-z0-9-]+)/.exec(body)?.[1] as Fault | undefined;
  if (fault === undefined || fault === "ok") return false;
  const json = (status: number, value: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
  };
  switch (fault) {
    case "429":
      json(429, {
        error: { message: "Rate limit reached.", type: "tokens", param: null, code: "rate_limit_exceeded" },
      });
      break;
    case "500":
      json(500, { error: { message: "The server had an error.", type: "server_error", param: null, code: null } });
      break;
    case "503":
      json(503, { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } });
      break;
    case "401":
      json(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
      break;
    case "reset":
      response.socket?.destroy();
      break;
    case "malformed":
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id": "x", "choices": [');
      break;
    case "cut-stream":
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "first" } }] })}\n\n`);
      response.write('data: {"choices": [{"ind');
      setTimeout(() => response.socket?.destroy(), 5);
      break;
    case "hang":
      break;
  }
  return true;
}

let customised = 0;
// One answer for every request: the fault the prompt names, otherwise a plain success per surface.
upstream.answerWith((request, response) => {
  customised++;
  if (!answer(request.body, response)) {
    const isGemini = request.url.startsWith("/gemini");
    const isAnthropic = request.url.startsWith("/anthropic");
    const stream = request.url.includes("stream") || request.body.includes('"stream":true');
    if (stream) {
      response.writeHead(200, { "content-type": "text/event-stream" });
      if (isGemini)
        response.end(
          `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }] })}\r\n\r\n`,
        );
      else
        response.end(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
        );
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    if (isGemini)
      response.end(
        JSON.stringify({
          candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }],
        }),
      );
    else if (isAnthropic)
      response.end(
        JSON.stringify({
          id: "msg",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: [{ type: "text", text: "ok" }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    else
      response.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          model: "gpt-test",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        }),
      );
  }
});

let logLines = 0;
const gateway = await startNodeGateway(
  {
    PORT: "0",
    HOST: "127.0.0.1",
    PROMPTGATE_DB: tempDatabase(),
    PROMPTGATE_POLICIES: copyPolicies({ "soak.short.toml": soakPolicy }),
    PROMPTGATE_MAX_BODY_BYTES: String(maxBodyBytes),
    PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
    PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
    PROMPTGATE_UPSTREAM_ANTHROPIC: `${upstream.origin}/anthropic`,
  },
  {
    logDestination: {
      write: () => {
        logLines++;
      },
    },
  },
);

interface Shot {
  kind: string;
  path: string;
  body: BodyInit;
}

const surfaces = [
  {
    path: "/openai/v1/chat/completions",
    body: (text: string, stream = false) =>
      JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: text }], ...(stream ? { stream } : {}) }),
    stream: "/openai/v1/chat/completions",
  },
  {
    path: "/gemini/v1beta/models/gemini-test:generateContent",
    body: (text: string) => JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }] }),
    stream: "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
  },
  {
    path: "/anthropic/v1/messages",
    body: (text: string, stream = false) =>
      JSON.stringify({
        model: "claude-test",
        max_tokens: 16,
        messages: [{ role: "user", content: text }],
        ...(stream ? { stream } : {}),
      }),
    stream: "/anthropic/v1/messages",
  },
];

const faults: Fault[] = ["429", "500", "503", "401", "reset", "malformed"];
let sequence = 0;

/** The next request of the mix: about half accepted, the rest rejections and faults. */
function nextShot(): Shot {
  const n = sequence++;
  const surface = surfaces[n % surfaces.length]!;
  const slot = Math.floor(n / surfaces.length) % 20;
  const text = `soak call ${n}`;
  if (slot < 9) return { kind: "accepted", path: surface.path, body: surface.body(text) };
  if (slot === 9) return { kind: "accepted-stream", path: surface.stream, body: surface.body(text, true) };
  if (slot === 10) return { kind: "oversize", path: surface.path, body: surface.body("x".repeat(maxBodyBytes)) };
  if (slot === 11) return { kind: "invalid-json", path: surface.path, body: surface.body(text).slice(0, -4) };
  if (slot === 12) return { kind: "invalid-utf8", path: surface.path, body: new Uint8Array([0x7b, 0x22, 0xff, 0x22]) };
  if (slot === 13)
    return { kind: "window", path: `/policies/soak.short${surface.path}`, body: surface.body("y".repeat(25_000)) };
  if (slot === 14)
    return { kind: "cut-stream", path: surface.stream, body: surface.body(`${text} FAULT:cut-stream`, true) };
  if (slot === 15 && n % 7 === 0)
    return { kind: "hang", path: `/policies/soak.short${surface.path}`, body: surface.body(`${text} FAULT:hang`) };
  const fault = faults[n % faults.length]!;
  return { kind: `fault-${fault}`, path: surface.path, body: surface.body(`${text} FAULT:${fault}`) };
}

/** Answers by class: `<kind> → <status> <code>`. */
const byClass = new Map<string, number>();
let completed = 0;
let clientFailures = 0;
let serverErrors5xxUnexpected = 0;

function count(key: string): void {
  byClass.set(key, (byClass.get(key) ?? 0) + 1);
}

async function fire(shot: Shot): Promise<void> {
  try {
    const response = await fetch(`${gateway.url}${shot.path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer k",
        "x-api-key": "k",
        "x-goog-api-key": "k",
      },
      body: shot.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let code = "";
    if (response.status >= 400) {
      const body = JSON.parse(text) as { error?: { promptgate?: { code?: string } } };
      code = body.error?.promptgate?.code ?? "?";
    } else if (text.includes('"promptgate"')) code = "stream-error";
    if (response.status === 500) serverErrors5xxUnexpected++;
    count(`${shot.kind} → ${response.status}${code ? ` ${code}` : ""}`);
  } catch (error) {
    clientFailures++;
    count(`${shot.kind} → client failure ${(error as Error).name}`);
  }
  completed++;
}

const started = Date.now();
const samples: Array<{ at: number; rss: number; heap: number }> = [];
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function report(final = false): void {
  const memory = process.memoryUsage();
  const at = Date.now() - started;
  samples.push({ at, rss: memory.rss, heap: memory.heapUsed });
  const rate = (completed / Math.max(1, at / 1000)).toFixed(0);
  console.log(
    `[${(at / 1000).toFixed(0).padStart(4)} s] requests ${completed} (${rate}/s), rss ${mb(memory.rss)} MB, heap ${mb(memory.heapUsed)} MB, log lines ${logLines}, client failures ${clientFailures}`,
  );
  if (final || samples.length % 3 === 0) {
    for (const [key, value] of [...byClass].sort()) console.log(`    ${key.padEnd(44)} ${value}`);
  }
}

const timer = setInterval(() => report(), 10_000);
const deadline = started + durationMs;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (Date.now() < deadline) await fire(nextShot());
  }),
);
clearInterval(timer);
report(true);

const baseline = samples.find((sample) => sample.at >= baselineAtMs - 1_000) ?? samples[0]!;
const later = samples.filter((sample) => sample.at >= baseline.at);
const peak = Math.max(...later.map((sample) => sample.rss));
const last = samples.at(-1)!;
const growth = (peak - baseline.rss) / baseline.rss;
const flat = growth <= 0.15;
console.log(
  `\nRSS at ${(baseline.at / 1000).toFixed(0)} s: ${mb(baseline.rss)} MB; peak after: ${mb(peak)} MB (${(growth * 100).toFixed(1)}%); at the end: ${mb(last.rss)} MB`,
);
console.log(
  `requests ${completed}, gateway 500s ${serverErrors5xxUnexpected}, client failures ${clientFailures}, upstream calls ${customised}`,
);
console.log(`verdict: ${flat ? "RSS stayed flat (within 15%)" : "RSS grew more than 15%"}`);

await gateway.close();
await upstream.close();
process.exit(flat && serverErrors5xxUnexpected === 0 ? 0 : 1);
