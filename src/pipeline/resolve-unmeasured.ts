import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { UnmeasuredContent } from "../logical-call.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { MeasuredEndpoint } from "../surfaces/surface.js";
import { compactJsonCodePoints } from "../window/code-points.js";
import { type CachedPrefix, countCall } from "../window/prompt-size.js";
import type { ParsedCall } from "./prepare-call.js";
import { isSuccess } from "./relay-response.js";
import { sendUpstream } from "./send-upstream.js";
import type { UpstreamCall } from "./upstream-call.js";

function cannotMeasure(content: UnmeasuredContent, estimating: boolean): GatewayError {
  const why = estimating ? "and the provider's token count for it is not available" : "under this policy";
  return new GatewayError(
    "CACHE_PREFIX_UNKNOWN",
    400,
    `The request refers to content the gateway cannot measure (${content.what}, at '${content.path}'), ${why}; nothing was sent.`,
    { param: content.path },
  );
}

const encoder = new TextEncoder();

/**
 * Content the model reads that the gateway cannot measure (a stored file, a prompt template, an
 * item or conversation reference, provider-expanded MCP tools) follows the policy's unknown-prefix
 * rule: `reject`, or `estimate` from the provider's own token count of the whole call at the
 * policy's characters per token. The estimate adds what that count exceeds the measured
 * characters by to the prefix, flagged as estimated; it is never silently 0.
 */
export async function resolveUnmeasured(
  deps: Deps,
  endpoint: MeasuredEndpoint,
  parsed: ParsedCall,
  policy: PolicyVersion,
  context: { call: UpstreamCall; path: string },
  prefix: CachedPrefix,
): Promise<CachedPrefix> {
  const [first] = parsed.call.unmeasured;
  if (first === undefined) return prefix;
  if (policy.policy.cache.unknown_prefix === "reject") throw cannotMeasure(first, false);
  const request = endpoint.tokenCount?.(parsed.body, context.path);
  if (request === undefined) throw cannotMeasure(first, true);
  const response = await sendUpstream(
    deps,
    context.call,
    request.path,
    encoder.encode(JSON.stringify(request.body)),
    "POST",
  );
  const bytes = await response.bytes();
  const answer = isSuccess(response.status) ? jsonObjectOf(bytes) : undefined;
  const tokens = answer === undefined ? undefined : request.tokensOf(answer);
  if (tokens === undefined || !Number.isFinite(tokens) || tokens < 0) throw cannotMeasure(first, true);
  const estimate = Math.ceil(tokens * policy.policy.cache.chars_per_token);
  const counts = countCall(parsed.call);
  const measured =
    counts.system +
    counts.messages +
    counts.tools +
    counts.other +
    counts.schemaTexts +
    counts.inline +
    compactJsonCodePoints(parsed.call.responseSchema) +
    prefix.chars;
  return {
    chars: prefix.chars + Math.max(0, estimate - measured),
    estimated: true,
    containsSchema: prefix.containsSchema,
  };
}
