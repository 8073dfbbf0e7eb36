import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import type { ErrorSurface } from "./native-errors.js";

/*
 * The three SDK clients against a gateway, each call's HTTP responses kept (the SDKs give no headers on Gemini's
 * answers and errors, and only the last attempt's elsewhere), for the limits-over-time tests.
 */

/** What one SDK call came to: the last HTTP response's status and headers, every attempt's, and the error body. */
export interface Outcome {
  ok: boolean;
  status: number;
  headers: Headers;
  /** Every HTTP response the SDK got for this call, the retries included, with when it arrived. */
  attempts: { status: number; headers: Headers; at: number }[];
  /** The whole native error body, as the SDK read it (undefined on success). */
  body: unknown;
  /** The SDK's error (undefined on success). */
  error: unknown;
}

export interface SendOptions {
  policy?: string;
  text?: string;
  /** The SDK's own retries (its defaults) instead of none. */
  retries?: boolean;
}

/** One surface's SDK: a whole call, and the path prefix its provider calls reach the fake upstream at. */
export interface SdkSurface {
  name: ErrorSurface;
  upstreamPrefix: string;
  send(gatewayUrl: string, secret: string, options?: SendOptions): Promise<Outcome>;
  /** A whole successful answer of this provider with the usage `input` + `output` tokens. */
  answer(input: number, output: number): unknown;
  /** A streamed answer's first event, written by a fake upstream that then holds the stream open. */
  firstStreamEvent: string;
  /** The input + output tokens that first event reports (Anthropic's message_start carries usage; the others none). */
  firstStreamTokens: number;
  /** Opens a streamed call, reads its first event, then cancels it; resolves with the stream's response headers. */
  cancelStream(gatewayUrl: string, secret: string, options?: SendOptions): Promise<Headers>;
}

function recorder() {
  const attempts: Outcome["attempts"] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    attempts.push({ status: response.status, headers: response.headers, at: Date.now() });
    return response;
  };
  return { attempts, recording };
}

const base = (url: string, policy?: string) => `${url}${policy === undefined ? "" : `/policies/${policy}`}`;

async function outcomeOf(
  attempts: Outcome["attempts"],
  call: () => Promise<unknown>,
  bodyOf: (error: unknown) => unknown,
): Promise<Outcome> {
  let error: unknown;
  let ok = true;
  try {
    await call();
  } catch (caught) {
    ok = false;
    error = caught;
  }
  const last = attempts.at(-1);
  if (last === undefined) throw error ?? new Error("The SDK sent nothing.");
  return { ok, status: last.status, headers: last.headers, attempts, body: ok ? undefined : bodyOf(error), error };
}

const defaultText = "How many characters does this call count?";

export const openaiSdk: SdkSurface = {
  name: "openai",
  upstreamPrefix: "/openai/v1/chat/completions",
  send(url, secret, { policy, text = defaultText, retries = false } = {}) {
    const { attempts, recording } = recorder();
    const client = new OpenAI({
      apiKey: secret,
      baseURL: `${base(url, policy)}/openai/v1`,
      fetch: recording,
      ...(retries ? {} : { maxRetries: 0 }),
    });
    return outcomeOf(
      attempts,
      () => client.chat.completions.create({ model: "gpt-4.1-mini", messages: [{ role: "user", content: text }] }),
      (error) => {
        if (!(error instanceof OpenAI.APIError)) throw error;
        return { error: error.error };
      },
    );
  },
  answer: (input, output) => ({
    id: "chatcmpl-limits",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4.1-mini",
    choices: [{ index: 0, message: { role: "assistant", content: "ok", refusal: null }, finish_reason: "stop" }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  }),
  firstStreamEvent: `data: ${JSON.stringify({
    id: "chatcmpl-held",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "gpt-4.1-mini",
    choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }],
  })}\n\n`,
  firstStreamTokens: 0,
  async cancelStream(url, secret, { policy, text = defaultText } = {}) {
    const { attempts, recording } = recorder();
    const client = new OpenAI({
      apiKey: secret,
      baseURL: `${base(url, policy)}/openai/v1`,
      fetch: recording,
      maxRetries: 0,
    });
    const stream = await client.chat.completions.create({
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: text }],
      stream: true,
    });
    for await (const _chunk of stream) break;
    stream.controller.abort();
    return (attempts.at(-1) as Outcome["attempts"][number]).headers;
  },
};

export const anthropicSdk: SdkSurface = {
  name: "anthropic",
  upstreamPrefix: "/anthropic/v1/messages",
  send(url, secret, { policy, text = defaultText, retries = false } = {}) {
    const { attempts, recording } = recorder();
    const client = new Anthropic({
      apiKey: secret,
      baseURL: `${base(url, policy)}/anthropic`,
      fetch: recording,
      ...(retries ? {} : { maxRetries: 0 }),
    });
    return outcomeOf(
      attempts,
      () =>
        client.messages.create({
          model: "claude-haiku-4-5",
          max_tokens: 16,
          messages: [{ role: "user", content: text }],
        }),
      (error) => {
        if (!(error instanceof Anthropic.APIError)) throw error;
        return error.error;
      },
    );
  },
  answer: (input, output) => ({
    id: "msg_limits",
    type: "message",
    role: "assistant",
    model: "claude-haiku-4-5",
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: output },
  }),
  firstStreamEvent: `event: message_start\ndata: ${JSON.stringify({
    type: "message_start",
    message: {
      id: "msg_held",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  })}\n\n`,
  firstStreamTokens: 6,
  async cancelStream(url, secret, { policy, text = defaultText } = {}) {
    const { attempts, recording } = recorder();
    const client = new Anthropic({
      apiKey: secret,
      baseURL: `${base(url, policy)}/anthropic`,
      fetch: recording,
      maxRetries: 0,
    });
    const stream = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: text }],
      stream: true,
    });
    for await (const _event of stream) break;
    stream.controller.abort();
    return (attempts.at(-1) as Outcome["attempts"][number]).headers;
  },
};

export const geminiSdk: SdkSurface = {
  name: "gemini",
  upstreamPrefix: "/gemini/v1beta/models/gemini-2.5-flash:",
  send(url, secret, { policy, text = defaultText } = {}) {
    const { attempts, recording } = recorder();
    // The Gemini SDK retries only when given retryOptions, and reads no Retry-After: no retries here.
    const client = new GoogleGenAI({
      apiKey: secret,
      httpOptions: { baseUrl: `${base(url, policy)}/gemini`, fetch: recording },
    });
    return outcomeOf(
      attempts,
      () => client.models.generateContent({ model: "gemini-2.5-flash", contents: text }),
      (error) => {
        if (!(error instanceof ApiError)) throw error;
        return JSON.parse(error.message);
      },
    );
  },
  answer: (input, output) => ({
    candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output },
    modelVersion: "gemini-2.5-flash",
  }),
  firstStreamEvent: `data: ${JSON.stringify({
    candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }],
    modelVersion: "gemini-2.5-flash",
  })}\n\n`,
  firstStreamTokens: 0,
  async cancelStream(url, secret, { policy, text = defaultText } = {}) {
    const { attempts, recording } = recorder();
    const controller = new AbortController();
    const client = new GoogleGenAI({
      apiKey: secret,
      httpOptions: { baseUrl: `${base(url, policy)}/gemini`, fetch: recording },
    });
    const stream = await client.models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: text,
      config: { abortSignal: controller.signal },
    });
    for await (const _chunk of stream) break;
    controller.abort();
    return (attempts.at(-1) as Outcome["attempts"][number]).headers;
  },
};

export const sdkSurfaces: readonly SdkSurface[] = [openaiSdk, anthropicSdk, geminiSdk];

/** A fake upstream answer that writes a stream's first event and holds it open until the gateway lets go. */
export function heldStream(firstEvent: string): (response: ServerResponse) => void {
  return (response) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write(firstEvent);
  };
}
