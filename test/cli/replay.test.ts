import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadPolicies } from "../../src/policy/load-policies.js";
import { type ReplayReport, replay } from "../../src/runtime/node/cli/replay.js";
import type { RequestReport } from "../../src/runtime/node/cli/replay-request.js";
import type { ReplayFile } from "../../src/runtime/node/cli/stored-requests.js";
import { UsageError } from "../../src/runtime/node/cli/usage-error.js";
import { readNamedSchemas, readPolicyFiles } from "../../src/runtime/node/node-gateway.js";
import { compactJsonCodePoints } from "../../src/window/code-points.js";

const run = promisify(execFile);

const shippedPolicies = await readPolicyFiles("policies");
/** investigation.bounded writing the schema for `responseSchema`, where every `$ref` is inlined. */
const inlinedPolicy = {
  path: "policies/investigation.inlined.toml",
  text: shippedPolicies
    .find(({ path }) => path.endsWith("investigation.bounded.toml"))!
    .text.replace('name = "investigation.bounded"', 'name = "investigation.inlined"')
    .replace('schema_field = "responseJsonSchema"', 'schema_field = "responseSchema"'),
};
const policies = await loadPolicies(
  [...shippedPolicies, inlinedPolicy],
  JSON.parse(readFileSync("schemas/policy.schema.json", "utf8")),
);

/**
 * A schema whose one definition is referenced ten times: compact it is about 2,200
 * characters, but written for `responseSchema`, every reference inlined, about 18,500.
 */
const fanout = {
  type: "object",
  $defs: {
    item: {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 20 }, (_, index) => [`field_${index}`, { type: "string", description: "d".repeat(50) }]),
      ),
    },
  },
  properties: Object.fromEntries(Array.from({ length: 10 }, (_, index) => [`slot_${index}`, { $ref: "#/$defs/item" }])),
};

const schemas = new Map([...(await readNamedSchemas("schemas")), ["fanout", fanout]]);

const routes = {
  chat: "/chat/completions",
  responses: "/responses",
  gemini: "/v1beta/models/gemini-2.5-flash:generateContent",
  anthropic: "/v1/messages",
} as const;

const chatBody = (content: string) => ({ model: "gpt-4o", messages: [{ role: "user", content }] });
const responsesBody = (input: string) => ({ model: "gpt-4o", input });
const geminiBody = (text: string) => ({ contents: [{ role: "user", parts: [{ text }] }] });
const anthropicBody = (content: string) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [{ role: "user", content }],
});

const text = (length: number) => "x".repeat(length);

function storedFile(value: unknown, path = "stored.json"): ReplayFile {
  return { path, text: JSON.stringify(value) };
}

function replayFiles(files: ReplayFile[], policy = "investigation.bounded"): Promise<ReplayReport> {
  return replay({ policy, policies, schemas, files });
}

async function replayOne(value: unknown, policy = "investigation.bounded"): Promise<RequestReport> {
  const report = await replayFiles([storedFile(value)], policy);
  expect(report.requests).toHaveLength(1);
  return report.requests[0]!;
}

describe("promptgate replay: surfaces and routes", () => {
  it.each([
    ["openai", routes.chat, chatBody("Hello, world")],
    ["openai", routes.responses, responsesBody("Hello, world")],
    ["gemini", routes.gemini, geminiBody("Hello, world")],
    ["anthropic", routes.anthropic, anthropicBody("Hello, world")],
  ])("measures an enveloped %s %s body on the route the envelope names", async (surface, route, body) => {
    const request = await replayOne({ surface, route, body });
    expect(request).toMatchObject({ surface, route, inferred: false, passes: true });
    expect(request.prompt_size).toMatchObject({ check: "preflight", message_chars: 12, total_chars: 12 });
    expect(request.provider_prompt_size).toMatchObject({ check: "provider", total_chars: 12 });
    expect(request.error).toBeUndefined();
  });

  it.each([
    ["openai", routes.chat, chatBody("Hello, world")],
    ["openai", routes.responses, responsesBody("Hello, world")],
    ["openai", routes.responses, { instructions: "Be brief.", model: "gpt-4o" }],
    ["gemini", "/v1beta/models/unspecified:generateContent", geminiBody("Hello, world")],
    [
      "gemini",
      "/v1beta/models/gemini-2.5-pro:generateContent",
      { ...geminiBody("Hi"), model: "models/gemini-2.5-pro" },
    ],
    ["anthropic", routes.anthropic, anthropicBody("Hello, world")],
    ["anthropic", routes.anthropic, { system: "Be brief.", messages: [{ role: "user", content: "Hi" }] }],
  ])("infers %s %s from the shape of a bare body and says so", async (surface, route, body) => {
    const request = await replayOne(body);
    expect(request).toMatchObject({ surface, route, inferred: true, passes: true });
  });

  it("infers OpenAI chat for a body with max_tokens whose messages carry a system role", async () => {
    const body = { model: "gpt-4o", max_tokens: 100, messages: [{ role: "system", content: "Be brief." }] };
    const request = await replayOne(body);
    expect(request).toMatchObject({ surface: "openai", route: routes.chat, inferred: true, passes: true });
    expect(request.prompt_size?.system_chars).toBe(9);
  });

  it.each([
    ["two APIs' shapes at once", { contents: [{ parts: [{ text: "Hi" }] }], input: "Hi" }, "openai and gemini"],
    ["no API's shape", { model: "gpt-4o", temperature: 0.2 }, "cannot be inferred"],
  ])("asks for an envelope for a bare body with %s", async (_, body, said) => {
    const report = await replayFiles([storedFile([body])]);
    expect(report.requests[0]).toMatchObject({ inferred: false, passes: false });
    expect(report.requests[0]?.error?.message).toContain(said);
  });

  it("measures a count route with the preflight only and never rejects it", async () => {
    const body = anthropicBody(text(30_000));
    const request = await replayOne({ surface: "anthropic", route: "/v1/messages/count_tokens", body });
    expect(request.passes).toBe(true);
    expect(request.prompt_size?.total_chars).toBe(30_000);
    expect(request.provider_prompt_size).toBeNull();
  });
});

describe("promptgate replay: the window checks", () => {
  it("rejects an oversize request in the preflight, without a provider check", async () => {
    const request = await replayOne({ surface: "openai", route: routes.chat, body: chatBody(text(19_000)) });
    expect(request).toMatchObject({ passes: false, rejected_by: "preflight" });
    expect(request.error?.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(request.prompt_size).toMatchObject({ total_chars: 19_000, conservative_total_chars: 20_500 });
    expect(request.provider_prompt_size).toBeNull();
  });

  it("rejects in the provider check a Gemini call whose named schema projects larger than the limit allows", async () => {
    const body = geminiBody(text(2_000));
    const stored = { surface: "gemini", route: routes.gemini, body, schema: "fanout" };
    // For responseJsonSchema the references stay: the projection is no larger than the schema.
    const kept = await replayOne(stored);
    expect(kept.provider_prompt_size!.schema_chars).toBeLessThanOrEqual(kept.prompt_size!.schema_chars);
    expect(kept).toMatchObject({ passes: true });
    const request = await replayOne(stored, "investigation.inlined");
    const preflight = request.prompt_size!;
    const provider = request.provider_prompt_size!;
    // The client's body alone is far inside the window, and so is the preflight with the full schema…
    expect(preflight.message_chars).toBe(2_000);
    expect(preflight.schema_chars).toBe(compactJsonCodePoints(fanout));
    expect(preflight.conservative_total_chars).toBeLessThanOrEqual(preflight.limit_chars);
    // …but the projection, every $ref inlined, is what the provider would receive.
    expect(provider.schema_chars).toBeGreaterThan(preflight.schema_chars);
    expect(provider.total_chars).toBeGreaterThan(provider.limit_chars);
    expect(request).toMatchObject({ passes: false, rejected_by: "provider" });
    expect(request.error?.code).toBe("INVESTIGATION_PROMPT_LIMIT");
  });

  it("rejects in the provider check a call whose schema the preflight counted once, deduplicated from the system text", async () => {
    const system = `Answer with one JSON object of this schema: ${JSON.stringify(fanout)}`;
    const body = {
      model: "gpt-4o",
      response_format: { type: "json_schema", json_schema: { name: "fanout", schema: fanout } },
      messages: [
        { role: "system", content: system },
        { role: "user", content: text(18_000 - system.length) },
      ],
    };
    const request = await replayOne({ surface: "openai", route: routes.chat, body });
    // Only the format's name ("fanout") is left of the schema in the preflight.
    expect(request.prompt_size).toMatchObject({ schema_deduplicated: true, schema_chars: 6, total_chars: 18_006 });
    expect(request.provider_prompt_size).toMatchObject({
      schema_deduplicated: false,
      total_chars: 18_006 + compactJsonCodePoints(fanout),
    });
    expect(request).toMatchObject({ passes: false, rejected_by: "provider" });
  });

  it("lets the same oversize request pass under case.interpretation, which measures only", async () => {
    const stored = { surface: "openai", route: routes.chat, body: chatBody(text(25_000)) };
    const bounded = await replayOne(stored, "investigation.bounded");
    const interpretation = await replayOne(stored, "case.interpretation");
    expect(bounded).toMatchObject({ passes: false, rejected_by: "preflight" });
    expect(interpretation).toMatchObject({ passes: true });
    expect(interpretation.rejected_by).toBeUndefined();
    expect(interpretation.prompt_size).toMatchObject({ total_chars: 25_000, policy: expect.stringMatching(/^case\./) });
  });

  it("counts a named schema from the envelope in the preflight", async () => {
    const v22 = schemas.get("investigation_bootstrap_v22");
    const body = chatBody("Hello");
    const request = await replayOne({
      surface: "openai",
      route: routes.chat,
      body,
      schema: "investigation_bootstrap_v22",
    });
    expect(request.prompt_size?.schema_chars).toBe(compactJsonCodePoints(v22));
    expect(request.prompt_size?.total_chars).toBe(5 + compactJsonCodePoints(v22));
    // The provider receives the schema natively, under the name the gateway gives it.
    expect(request.provider_prompt_size?.schema_chars).toBe(compactJsonCodePoints(v22) + "promptgate_schema".length);
    expect(request.passes).toBe(true);
  });

  it("counts the cached prefix size the envelope records, in both checks", async () => {
    const body = { ...geminiBody("Hello"), cachedContent: "cachedContents/abc" };
    const request = await replayOne({ surface: "gemini", route: routes.gemini, body, cache_prefix_chars: 3_000 });
    expect(request.prompt_size).toMatchObject({ cache_prefix_chars: 3_000, total_chars: 3_005 });
    expect(request.provider_prompt_size).toMatchObject({ cache_prefix_chars: 3_000, total_chars: 3_005 });
    expect(request.cache_prefix_unmeasured).toBeUndefined();
  });

  it("rejects a call that only the recorded cached prefix pushes over the limit", async () => {
    const body = chatBody(text(1_000));
    const request = await replayOne({ surface: "openai", route: routes.chat, body, cache_prefix_chars: 18_000 });
    expect(request).toMatchObject({ passes: false, rejected_by: "preflight" });
  });

  it.each([
    ["a Gemini cachedContent", { ...geminiBody("Hello"), cachedContent: "cachedContents/abc" }],
    ["a Responses previous_response_id", { ...responsesBody("Hello"), previous_response_id: "resp_123" }],
    ["a Responses conversation", { ...responsesBody("Hello"), conversation: { id: "conv_123" } }],
  ])("flags %s without a recorded size as unmeasured and counts it as 0", async (_, body) => {
    const request = await replayOne(body);
    expect(request.cache_prefix_unmeasured).toBe(true);
    expect(request.prompt_size?.cache_prefix_chars).toBe(0);
  });
});

describe("promptgate replay: policies", () => {
  it("resolves a version pinned by 12 hex digits and reports it", async () => {
    const current = policies.resolve("investigation.bounded");
    const pinned = `investigation.bounded@${current.sha256.slice(0, 12)}`;
    const report = await replayFiles([storedFile(chatBody("Hello"))], pinned);
    expect(report.policy).toBe(current.ref);
    expect(report.requests[0]?.prompt_size?.policy).toBe(current.ref);
  });

  it("refuses an unknown pinned version as a usage error", async () => {
    const files = [storedFile(chatBody("Hello"))];
    await expect(replayFiles(files, "investigation.bounded@000000000000")).rejects.toThrow(UsageError);
    await expect(replayFiles(files, "no.such.policy")).rejects.toThrow(/no\.such\.policy/);
  });
});

describe("promptgate replay: files and invalid entries", () => {
  it("reads an array file, a single-request file and a JSON Lines file", async () => {
    const report = await replayFiles([
      storedFile([chatBody("a"), geminiBody("bb")], "array.json"),
      storedFile(anthropicBody("ccc"), "single.json"),
      { path: "lines.jsonl", text: `${JSON.stringify(responsesBody("dddd"))}\n\n${JSON.stringify(chatBody("e"))}\n` },
    ]);
    expect(report.files).toEqual(["array.json", "single.json", "lines.jsonl"]);
    expect(report.requests.map((request) => [request.file, request.index])).toEqual([
      ["array.json", 0],
      ["array.json", 1],
      ["single.json", 0],
      ["lines.jsonl", 0],
      ["lines.jsonl", 1],
    ]);
    expect(report.summary).toEqual({
      count: 5,
      passing: 5,
      rejected: 0,
      invalid: 0,
      min_total_chars: 1,
      max_total_chars: 4,
    });
  });

  it("reports invalid bodies, unknown routes and unknown schemas as errors, not failures of the run", async () => {
    const report = await replayFiles([
      storedFile([
        { model: "gpt-4o", messages: "not a list" },
        "not an object",
        { surface: "openai", route: "/completions", body: chatBody("Hello") },
        { surface: "openai", route: routes.chat, body: chatBody("Hello"), schema: "no_such_schema" },
        { surface: "mistral", route: routes.chat, body: chatBody("Hello") },
        { temperature: 0.2 },
        chatBody(text(30_000)),
        chatBody("fine"),
      ]),
    ]);
    expect(report.requests.map((request) => request.error?.code ?? "ok")).toEqual([
      "INVALID_REQUEST",
      "INVALID_REQUEST",
      "NOT_FOUND",
      "INVALID_REQUEST",
      "INVALID_REQUEST",
      "INVALID_REQUEST",
      "INVESTIGATION_PROMPT_LIMIT",
      "ok",
    ]);
    expect(report.requests[0]).toMatchObject({ surface: "openai", inferred: true, passes: false, prompt_size: null });
    expect(report.summary).toMatchObject({ count: 8, passing: 1, rejected: 1, invalid: 6 });
    expect(report.summary).toMatchObject({ min_total_chars: 4, max_total_chars: 30_000 });
  });

  it("refuses a file that is not JSON as a usage error naming the file", async () => {
    await expect(replayFiles([{ path: "broken.json", text: "{ not json" }])).rejects.toThrow(/broken\.json/);
    await expect(replayFiles([{ path: "scalar.json", text: "42" }])).rejects.toThrow(UsageError);
  });

  it("names the line of a JSON Lines file that is not JSON", async () => {
    const file = { path: "stored.jsonl", text: `${JSON.stringify(chatBody("a"))}\n{ broken\n` };
    await expect(replayFiles([file])).rejects.toThrow(/stored\.jsonl, line 2/);
  });
});

// Each case starts npx and a node process: on a slow, loaded machine that takes more than the default 20 s.
describe("promptgate replay as a process", { timeout: 60_000 }, () => {
  async function storedRequestsFile(): Promise<string> {
    const path = join(await mkdtemp(join(tmpdir(), "promptgate-replay-")), "stored.json");
    await writeFile(path, JSON.stringify([chatBody("Hello"), chatBody(text(19_000))]));
    return path;
  }

  it("prints one JSON report and exits 0, even when a call would be rejected", async () => {
    const file = await storedRequestsFile();
    const { stdout } = await run("npx", ["promptgate", "replay", "--policy", "investigation.bounded", file]);
    const report = JSON.parse(stdout) as ReplayReport;
    expect(report.policy).toBe(policies.resolve("investigation.bounded").ref);
    expect(report.files).toEqual([file]);
    expect(report.summary).toMatchObject({ count: 2, passing: 1, rejected: 1, invalid: 0 });
  });

  it("exits 2 with a one-line message for an unknown policy", async () => {
    const file = await storedRequestsFile();
    const failure = await run("npx", ["promptgate", "replay", "--policy", "no.such.policy", file]).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stdout).toBe("");
    expect(failure?.stderr).toContain('"no.such.policy"');
    expect(failure?.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("replaying a call the model table routes to another provider", () => {
  const tools = Array.from({ length: 5 }, (_, index) => ({
    type: "function",
    function: { name: `tool_${index}`, description: "A tool.", parameters: { type: "object" } },
  }));

  it("measures the provider check on the translated body, as the gateway would send it", async () => {
    const body = { model: "gemini-2.5-flash", messages: [{ role: "user", content: "Hello" }], tools };
    const report = await replayOne({ surface: "openai", route: routes.chat, body });
    expect(report).toMatchObject({ passes: true, routed_to: "gemini" });
    // Gemini's function declarations are not the chat tools' JSON: the provider check counts what Gemini gets.
    expect(report.provider_prompt_size?.tool_chars).not.toBe(report.prompt_size?.tool_chars);
    const native = await replayOne({ surface: "openai", route: routes.chat, body: { ...body, model: "gpt-4o" } });
    expect(native.routed_to).toBeUndefined();
    expect(native.provider_prompt_size?.tool_chars).toBe(native.prompt_size?.tool_chars);
  });

  it("reports a parameter the provider has no counterpart for as the gateway would refuse it", async () => {
    const body = { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }], logit_bias: { "1": 2 } };
    const report = await replayOne({ surface: "openai", route: routes.chat, body });
    expect(report).toMatchObject({ passes: false, error: { code: "INVALID_REQUEST" } });
    expect(report.error?.message).toContain("'logit_bias'");
  });
});
