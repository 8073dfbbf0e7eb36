import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { createApp } from "../../../src/app.js";
import type { Deps } from "../../../src/deps.js";
import { createNodeDeps } from "../../../src/runtime/node/node-gateway.js";
import type { Transport, UpstreamRequest } from "../../../src/transport/transport.js";

/** The measuring policy of the oracle: measures without enforcing, counts unknown fields, rejects unknown prefixes. */
export const MEASURE_POLICY = `name = "oracle.measure"
description = "Oracle: measure only, count unknown fields, reject unknown prefixes."

[window]
enforce = false
target_chars = 1000000
limit_chars = 10000000
reserve_chars = 0
unknown_fields = "count"

[validation]
enabled = false

[cache]
unknown_prefix = "reject"
`;

export type SurfaceName = "openai-chat" | "openai-responses" | "gemini" | "anthropic";

/** Mount and route below a policy prefix, per surface. */
const ROUTES: Record<SurfaceName, { mount: string; route: string; headers: Record<string, string> }> = {
  "openai-chat": { mount: "/openai/v1", route: "/chat/completions", headers: { authorization: "Bearer sk-oracle" } },
  "openai-responses": { mount: "/openai/v1", route: "/responses", headers: { authorization: "Bearer sk-oracle" } },
  gemini: {
    mount: "/gemini",
    route: "/v1beta/models/gemini-2.5-flash:generateContent",
    headers: { "x-goog-api-key": "oracle-key" },
  },
  anthropic: {
    mount: "/anthropic",
    route: "/v1/messages",
    headers: { "x-api-key": "oracle-key", "anthropic-version": "2023-06-01" },
  },
};

/** One request as the fake upstream received it. */
export interface Received {
  url: string;
  method: string;
  body: string;
}

export interface PromptSizeLike {
  check?: string;
  total_chars: number;
  [member: string]: unknown;
}

export interface CallOutcome {
  status: number;
  /** The gateway's error code, when the answer is an error. */
  code: string | undefined;
  ref: string;
  preflight: PromptSizeLike | undefined;
  provider: PromptSizeLike | undefined;
  otherFields: string[] | undefined;
  received: Received | undefined;
  responseText: string;
}

let responseCounter = 0;

function jsonAnswer(body: unknown): { status: number; headers: Record<string, string>; text: string } {
  return { status: 200, headers: { "content-type": "application/json" }, text: JSON.stringify(body) };
}

function sseAnswer(events: Array<[string | undefined, unknown]>, done = false) {
  let text = "";
  for (const [event, data] of events) {
    if (event) text += `event: ${event}\n`;
    text += `data: ${JSON.stringify(data)}\n\n`;
  }
  if (done) text += "data: [DONE]\n\n";
  return { status: 200, headers: { "content-type": "text/event-stream" }, text };
}

/** A minimal valid success of the route the gateway called, streamed when the request asked so. */
function answerFor(url: string, body: string) {
  let stream = false;
  try {
    stream = (JSON.parse(body) as { stream?: unknown }).stream === true;
  } catch {
    // not JSON: answer the plain shape
  }
  const id = `${++responseCounter}`;
  if (url.includes("/chat/completions")) {
    const message = { role: "assistant", content: "ok", refusal: null };
    if (stream)
      return sseAnswer(
        [
          [
            undefined,
            {
              id: `chatcmpl-${id}`,
              object: "chat.completion.chunk",
              created: 1,
              model: "gpt-4o-mini",
              choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }],
            },
          ],
          [
            undefined,
            {
              id: `chatcmpl-${id}`,
              object: "chat.completion.chunk",
              created: 1,
              model: "gpt-4o-mini",
              choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
            },
          ],
        ],
        true,
      );
    return jsonAnswer({
      id: `chatcmpl-${id}`,
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [{ index: 0, message, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  }
  if (url.endsWith("/responses")) {
    const response = {
      id: `resp_${id}`,
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-4o-mini",
      output: [
        {
          type: "message",
          id: `msg_${id}`,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "ok", annotations: [] }],
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
    if (stream)
      return sseAnswer([
        [
          "response.created",
          {
            type: "response.created",
            sequence_number: 0,
            response: { ...response, status: "in_progress", output: [] },
          },
        ],
        ["response.completed", { type: "response.completed", sequence_number: 1, response }],
      ]);
    return jsonAnswer(response);
  }
  if (url.includes(":generateContent") || url.includes(":streamGenerateContent")) {
    const answer = {
      candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      modelVersion: "gemini-2.5-flash",
    };
    if (url.includes(":streamGenerateContent")) return sseAnswer([[undefined, answer]]);
    return jsonAnswer(answer);
  }
  if (url.includes("/v1/messages")) {
    const message = {
      id: `msg_${id}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "ok" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    if (stream)
      return sseAnswer([
        ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null } }],
        ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
        ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
        [
          "message_delta",
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 1 },
          },
        ],
        ["message_stop", { type: "message_stop" }],
      ]);
    return jsonAnswer(message);
  }
  return { status: 404, headers: { "content-type": "application/json" }, text: '{"error":{"message":"not found"}}' };
}

function bodyText(body: UpstreamRequest["body"]): string {
  if (body === undefined) return "";
  if (typeof body === "string") return body;
  return new TextDecoder("utf-8").decode(body);
}

/** A gateway built in-process in front of a recording fake upstream. */
export interface OracleGateway {
  deps: Deps;
  send(surface: SurfaceName, policy: string | undefined, jsonText: string): Promise<CallOutcome>;
  close(): Promise<void>;
}

export async function startOracleGateway(): Promise<OracleGateway> {
  const root = resolve(import.meta.dirname, "../../..");
  const policies = mkdtempSync(join(tmpdir(), "promptgate-oracle-policies-"));
  cpSync(join(root, "policies"), policies, { recursive: true });
  writeFileSync(join(policies, "oracle.measure.toml"), MEASURE_POLICY);
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const deps = await createNodeDeps(
    {
      PROMPTGATE_DB: "memory",
      PROMPTGATE_POLICIES: policies,
      PROMPTGATE_SCHEMAS: join(root, "schemas"),
      PROMPTGATE_UPSTREAM_OPENAI: "http://upstream.test/openai/v1",
      PROMPTGATE_UPSTREAM_GEMINI: "http://upstream.test/gemini",
      PROMPTGATE_UPSTREAM_ANTHROPIC: "http://upstream.test/anthropic",
      OPENAI_API_KEY: "",
      GEMINI_API_KEY: "",
      ANTHROPIC_API_KEY: "",
      PROMPTGATE_ADMIN_KEY: "",
      PROMPTGATE_LOG: "silent",
    },
    { logDestination: quiet as never },
  );
  let received: Received[] = [];
  const transport: Transport = async (request) => {
    const text = bodyText(request.body);
    received.push({ url: request.url, method: request.method, body: text });
    const answer = answerFor(request.url, text);
    const bytes = new TextEncoder().encode(answer.text);
    return {
      status: answer.status,
      headers: answer.headers,
      bytes: async () => bytes,
      stream: () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        }),
    };
  };
  deps.transport = transport;
  const app = createApp(deps);

  async function send(surface: SurfaceName, policy: string | undefined, jsonText: string): Promise<CallOutcome> {
    const { mount, route, headers } = ROUTES[surface];
    const prefix = policy ? `/policies/${policy}` : "";
    received = [];
    const response = await app.fetch(
      new Request(`http://gateway${prefix}${mount}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: jsonText,
      }),
    );
    const responseText = await response.text();
    const ref = response.headers.get("x-promptgate-ref") ?? "";
    const sizeHeader = response.headers.get("x-promptgate-prompt-size");
    const record = ref ? await deps.store.getCall(ref) : undefined;
    let code: string | undefined;
    if (response.status >= 400) {
      try {
        const parsed = JSON.parse(responseText) as { error?: { promptgate?: { code?: string } } };
        code = parsed.error?.promptgate?.code;
      } catch {
        code = "unparseable-error";
      }
    }
    if (received.length > 1) throw new Error(`one call reached the upstream ${received.length} times`);
    return {
      status: response.status,
      code,
      ref,
      preflight: sizeHeader ? (JSON.parse(sizeHeader) as PromptSizeLike) : undefined,
      provider: (record?.provider_check ?? undefined) as PromptSizeLike | undefined,
      otherFields: record?.other_fields,
      received: received[0],
      responseText,
    };
  }

  return {
    deps,
    send,
    close: async () => {
      await deps.store.close();
      rmSync(policies, { recursive: true, force: true });
    },
  };
}
