import { upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import { isObject } from "../json/json-object.js";
import { validateAnswer } from "../schema/diagnostics.js";
import type { Surface } from "../surfaces/surface.js";

/** How one provider fared in the release check. */
export interface SelfTestProvider {
  provider: string;
  /** The model the job asked for (the model table's first entry for the provider, or a default name). */
  model: string;
  /** Where its calls go: `simulated`, or the upstream's origin. */
  upstream: string;
  pass: boolean;
  /** The job's last state: `completed`, `failed`, `cancelled`, or still `queued`/`in_progress` at the timeout. */
  state: string;
  /** Why it did not pass: the job's error code, `invalid_answer`, `timeout`, or `simulated` (answered by the stand-in). */
  problem?: string;
  /** The ref of the failed call, where the job has one. */
  ref?: string;
  /** Milliseconds from the job's creation to its end (or the timeout). */
  ms: number;
}

/** The release check's report: every provider's job, and whether all passed. */
export interface SelfTestReport {
  pass: boolean;
  providers: SelfTestProvider[];
}

/** The structured answer every job of the check must give, validated against this schema. */
const schema = {
  type: "object",
  properties: { ok: { type: "boolean" }, checked: { type: "string" } },
  required: ["ok", "checked"],
  additionalProperties: false,
};

/** How often a job is polled. */
const pollMs = 250;

/** How the release check runs. */
export interface SelfTestOptions {
  /** How long each job may take. */
  timeoutMs: number;
  /** Whether a provider answered by the simulated one passes (default true); `promptgate selftest` without `--simulated` fails it. */
  simulatedPasses?: boolean;
}

/**
 * The release check: for every provider, one synthetic answer job, created and polled through the
 * gateway's own OpenAI Responses API like a client (`fetch` is the app), must end `completed` with a structured
 * answer valid against its schema. A reachable health endpoint shows only that the gateway runs; this shows that a
 * call goes through, provider and all.
 */
export async function selfTest(
  deps: Deps,
  fetch: (request: Request) => Promise<Response>,
  options: SelfTestOptions,
): Promise<SelfTestReport> {
  const providers = await Promise.all(deps.surfaces.map((surface) => checkProvider(deps, fetch, surface, options)));
  return { pass: providers.every((provider) => provider.pass), providers };
}

async function checkProvider(
  deps: Deps,
  fetch: (request: Request) => Promise<Response>,
  surface: Surface,
  options: SelfTestOptions,
): Promise<SelfTestProvider> {
  const provider = surface.name;
  const model = deps.models.listed().find((entry) => entry.provider === provider)?.name ?? surface.selfTestModel;
  const upstream = upstreamOf(deps.config, provider).label;
  const started = Date.now();
  const result = (state: string, problem?: string, ref?: string): SelfTestProvider => ({
    provider,
    model,
    upstream,
    pass: problem === undefined,
    state,
    ...(problem === undefined ? {} : { problem }),
    ...(ref === undefined ? {} : { ref }),
    ms: Date.now() - started,
  });
  const key = deps.config.gatewayKeys[0] ?? upstreamOf(deps.config, "openai").serverKey;
  const headers = {
    "content-type": "application/json",
    "x-promptgate-call": "promptgate_selftest",
    ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
  };
  const base = "http://promptgate.selftest/openai/v1/responses";
  const created = await fetch(
    new Request(base, {
      method: "POST",
      headers,
      body: JSON.stringify({
        model,
        input: "promptgate release check: answer with the JSON object the schema asks for, ok true.",
        background: true,
        store: false,
        text: { format: { type: "json_schema", name: "promptgate_selftest", schema, strict: true } },
      }),
    }),
  );
  let job = await created.json().catch(() => undefined);
  if (!created.ok || !isObject(job) || typeof job.id !== "string")
    return result("not_created", codeOf(job), refOf(job));
  const id = job.id;
  while (isObject(job) && !["completed", "failed", "cancelled"].includes(String(job.status))) {
    if (Date.now() - started > options.timeoutMs) return result(String(job.status), "timeout");
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const polled = await fetch(new Request(`${base}/${id}`, { headers }));
    job = await polled.json().catch(() => undefined);
    if (!polled.ok) return result("unknown", codeOf(job), refOf(job));
  }
  if (!isObject(job) || job.status !== "completed") {
    const error = isObject(job) && isObject(job.error) ? job.error : {};
    return result(String(isObject(job) ? job.status : "unknown"), String(error.code ?? "failed"));
  }
  const valid = validateAnswer(deps.schemaValidators.validatorFor(schema), outputText(job)).valid;
  if (!valid) return result("completed", "invalid_answer");
  // A release check that only reached the stand-in checked no provider.
  const simulated = upstreamOf(deps.config, provider).simulated && options.simulatedPasses === false;
  return result("completed", simulated ? "simulated" : undefined);
}

/** The text of a Response object's output messages. */
function outputText(response: Record<string, unknown>): string {
  let text = "";
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isObject(item) || !Array.isArray(item.content)) continue;
    for (const part of item.content) if (isObject(part) && typeof part.text === "string") text += part.text;
  }
  return text;
}

/** The gateway's code of an error body, in any surface's shape. */
function codeOf(body: unknown): string {
  const member = isObject(body) && isObject(body.error) && isObject(body.error.promptgate) ? body.error.promptgate : {};
  return String(member.code ?? "failed");
}

function refOf(body: unknown): string | undefined {
  const member = isObject(body) && isObject(body.error) && isObject(body.error.promptgate) ? body.error.promptgate : {};
  return typeof member.ref === "string" ? member.ref : undefined;
}
