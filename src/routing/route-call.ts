import type { Config } from "../config.js";
import type { JsonObject } from "../json/json-object.js";
import type { Policy } from "../policy/policy.js";
import type { MeasuredEndpoint, Surface } from "../surfaces/surface.js";
import type { ReasoningLevel } from "../surfaces/translation.js";
import type { ModelEntry, ModelTable } from "./model-table.js";
import { checkedReasoning } from "./reasoning.js";
import { type CallTranslation, translateCall } from "./translate-call.js";
import { routedCredential } from "./upstream-credential.js";

/** The request a provider receives when it is not the client's own: another route, another body. */
export interface ProviderTarget {
  /** The provider's endpoint that measures the body. */
  endpoint: MeasuredEndpoint;
  /** The route path below the provider's base URL, with its query if it has one. */
  path: string;
  body: JsonObject;
}

/** Where one attempt of a call goes, and in what form. */
export interface CallRoute {
  /** The model table's entry for the call's model; undefined for a call that names no model. */
  entry: ModelEntry | undefined;
  /** The call's checked reasoning level, if it asks for one. */
  reasoning: ReasoningLevel | undefined;
  /** The surface whose provider the call reaches: the client's own, or the one a routed model goes to. */
  provider: Surface;
  /** The request the provider receives when it is not the client's (translated, or with the table's model id). */
  target: ProviderTarget | undefined;
  /** How the answer comes back in the client's form, for a translated call. */
  translation: CallTranslation | undefined;
}

/** What routing a call needs to know besides its body. */
export interface RoutingContext {
  config: Config;
  models: ModelTable;
  /** Every surface of the gateway, by which a routed model's provider is found. */
  surfaces: readonly Surface[];
  policy: Policy;
  /** The time the call arrived, in milliseconds: a translated answer's `created`. */
  now: number;
  /** The server-held credential the caller's named key names for a provider, if it names one (`keyCredentialOf`). */
  keyCredential: (provider: string) => string | undefined;
}

/**
 * Routes one attempt of a call by its model: the table's entry decides the provider and the provider's model id,
 * and the call's reasoning level is checked against the allowlist and the entry. A surface that routes models (the
 * OpenAI API) sends a model of another provider there, translated; every other surface reaches its own provider,
 * its body unchanged. Throws INVALID_REQUEST for a level, a route or a parameter the provider cannot take.
 */
export function routeCall(
  context: RoutingContext,
  surface: Surface,
  endpoint: MeasuredEndpoint,
  path: string,
  body: JsonObject,
  entry: ModelEntry | undefined,
): CallRoute {
  const requested = endpoint.reasoningOf?.(body, path);
  if (entry === undefined)
    return { entry, reasoning: undefined, provider: surface, target: undefined, translation: undefined };
  const provider = surface.routesModels ? providerOf(context.surfaces, entry) : surface;
  // On a surface that does not route, a model the table gives another provider is checked against the allowlist only.
  const reasoningEntry = provider.name === entry.provider ? entry : { ...entry, reasoning: undefined };
  const reasoning = checkedReasoning(requested, reasoningEntry);
  if (provider === surface) {
    const renamed = surface.routesModels && entry.upstreamModel !== entry.name;
    const target = renamed ? { endpoint, path, body: { ...body, model: entry.upstreamModel } } : undefined;
    return { entry, reasoning, provider, target, translation: undefined };
  }
  // Only the provider's own server-held key goes there: refused here, before the checks, when it has none.
  routedCredential(context.config, provider, context.keyCredential(provider.name));
  const translation = translateCall(path, body, provider, {
    upstreamModel: entry.upstreamModel,
    publicModel: entry.name,
    reasoning,
    droppable: context.policy.translation?.droppable ?? [],
    // Made only for a translated call: an answer of the client's own provider carries the provider's id.
    id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(context.now / 1000),
  });
  const target = { endpoint: translation.endpoint, path: translation.request.path, body: translation.request.body };
  return { entry, reasoning, provider, target, translation };
}

function providerOf(surfaces: readonly Surface[], entry: ModelEntry): Surface {
  const provider = surfaces.find((candidate) => candidate.name === entry.provider);
  // The table is checked against the surfaces when it is read.
  if (provider === undefined) throw new Error(`The model table names provider ${entry.provider}, which is no surface.`);
  return provider;
}
