// npm run demo: the gateway on the simulated provider, driven by the three real SDK clients.
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { startNodeGateway } from "../src/runtime/node/node-gateway.js";

const gateway = await startNodeGateway({
  ...process.env,
  PORT: "0",
  PROMPTGATE_DB: "memory",
  PROMPTGATE_LOG: "silent",
  PROMPTGATE_UPSTREAM_OPENAI: "simulated",
  PROMPTGATE_UPSTREAM_GEMINI: "simulated",
  PROMPTGATE_UPSTREAM_ANTHROPIC: "simulated",
});
const policyBase = `${gateway.url}/policies/investigation.bounded`;

function show(title: string, lines: Record<string, unknown>): void {
  process.stdout.write(`\n== ${title}\n`);
  for (const [label, value] of Object.entries(lines)) {
    process.stdout.write(`   ${label.padEnd(12)} ${typeof value === "string" ? value : JSON.stringify(value)}\n`);
  }
}

function sizeSummary(header: string | null): string {
  if (header === null) return "(none)";
  const size = JSON.parse(header);
  return `total ${size.total_chars} + reserve ${size.reserve_chars} = ${size.conservative_total_chars} of limit ${size.limit_chars} (target ${size.target_chars}, over_target ${size.over_target}), policy ${size.policy}`;
}

process.stdout.write(`promptgate demo: gateway on ${gateway.url}, every upstream is the simulated provider\n`);

try {
  // 1. An accepted structured call through the openai SDK.
  const openai = new OpenAI({ apiKey: "demo", baseURL: `${policyBase}/openai/v1`, maxRetries: 0 });
  const { data, response } = await openai.chat.completions
    .create({
      model: "gpt-demo",
      messages: [
        { role: "developer", content: "You classify support tickets." },
        { role: "user", content: "My invoice from March is missing." },
      ],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "ticket",
          schema: {
            type: "object",
            properties: { category: { type: "string", enum: ["billing", "technical", "other"] } },
            required: ["category"],
            additionalProperties: false,
          },
        },
      },
    })
    .withResponse();
  show("1. openai: an accepted call", {
    answer: data.choices[0]?.message.content ?? "",
    prompt_size: response.headers.get("x-promptgate-prompt-size"),
    window: sizeSummary(response.headers.get("x-promptgate-prompt-size")),
    ref: response.headers.get("x-promptgate-ref"),
  });

  // 2. A call over the 10,000-character target but inside the 20,000 limit: sent, and reported.
  const gemini = new GoogleGenAI({ apiKey: "demo", httpOptions: { baseUrl: `${policyBase}/gemini` } });
  const overTarget = await gemini.models.generateContent({
    model: "gemini-demo",
    contents: `Summarize these notes: ${"the build failed on step four; ".repeat(400)}`,
    config: { systemInstruction: "You are terse." },
  });
  const sizeHeader = overTarget.sdkHttpResponse?.headers?.["x-promptgate-prompt-size"] ?? null;
  show("2. gemini: a call over the target, still sent", {
    answer: `${(overTarget.text ?? "").slice(0, 90)}…`,
    window: sizeSummary(sizeHeader),
  });

  // 3. An oversize call: rejected before any provider call, in Anthropic's own error shape.
  const anthropic = new Anthropic({ apiKey: "demo", baseURL: `${policyBase}/anthropic`, maxRetries: 0 });
  try {
    await anthropic.messages.create({
      model: "claude-demo",
      max_tokens: 512,
      system: "You review evidence.",
      messages: [{ role: "user", content: "evidence line\n".repeat(1500) }],
    });
    show("3. anthropic: unexpectedly accepted", {});
  } catch (error) {
    if (!(error instanceof Anthropic.BadRequestError)) throw error;
    const body = error.error as { error?: { code?: string; message?: string; promptgate?: { prompt_size?: unknown } } };
    show("3. anthropic: an oversize call, rejected and never sent", {
      error: `${error.constructor.name} ${error.status} ${body.error?.code}`,
      message: body.error?.message ?? "",
      window: sizeSummary(JSON.stringify(body.error?.promptgate?.prompt_size ?? null)),
      retry: `x-should-retry: ${error.headers?.get("x-should-retry")}`,
    });
  }
} finally {
  await gateway.close();
}
