import { isObject, type JsonObject } from "../json/json-object.js";
import { closestName } from "../policy/closest-name.js";
import { PolicyFileError } from "../policy/policy-file-error.js";
import { parseTomlFile } from "../policy/toml-file.js";
import type { Surface } from "../surfaces/surface.js";
import { type ReasoningLevel, reasoningLevels } from "../surfaces/translation.js";

/** The file of the policy folder that holds the model table; every other `*.toml` there is a policy. */
export const modelTableFile = "models.toml";

/** Where a public model name goes: a provider, the provider's own id, the reasoning levels it takes, one fallback. */
export interface ModelEntry {
  /** The name clients use. */
  name: string;
  /** The provider (its surface's name) that serves it. */
  provider: string;
  /** The provider's own model id. */
  upstreamModel: string;
  /** The reasoning levels the model supports (within the gateway's allowlist); undefined: every allowlisted level. */
  reasoning: readonly ReasoningLevel[] | undefined;
  /** The one model tried when this one fails transiently, if any. */
  fallback: string | undefined;
  /** Whether the table names it (listed by `GET /openai/v1/models`), rather than a prefix rule or the default. */
  listed: boolean;
}

/** The model table: named entries first, then the longest matching prefix rule, then the default provider. */
export interface ModelTable {
  /** Where the table comes from (a file path, or `(shipped default)`), for messages. */
  source: string;
  /** The entry a model name resolves to; every name resolves (to the default provider at least). */
  resolve(name: string): ModelEntry;
  /** The named entries, in the file's order. */
  listed(): readonly ModelEntry[];
}

/** A prefix rule: every name that starts with `prefix` goes to `provider`, with the name as the upstream id. */
interface PrefixRule {
  prefix: string;
  provider: string;
  reasoning: readonly ReasoningLevel[] | undefined;
  fallback: string | undefined;
}

/**
 * The table when the policy folder holds no `models.toml`, as each surface declares its names (`shippedModels`): e.g.
 * Gemini and Claude names by prefix, every other name to OpenAI.
 */
export function shippedModelTable(surfaces: readonly Pick<Surface, "name" | "shippedModels">[]): string {
  const byDefault = surfaces.find((surface) => surface.shippedModels?.defaultModels);
  const lines = byDefault === undefined ? [] : [`default_provider = ${JSON.stringify(byDefault.name)}`];
  for (const surface of surfaces) {
    for (const prefix of surface.shippedModels?.prefixes ?? []) {
      lines.push("", "[[prefix]]", `prefix = ${JSON.stringify(prefix)}`, `provider = ${JSON.stringify(surface.name)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

const topKeys = ["default_provider", "default_reasoning", "prefix", "model"];
const prefixKeys = ["prefix", "provider", "reasoning", "fallback"];
const modelKeys = ["provider", "upstream_model", "reasoning", "fallback"];

/**
 * Reads and checks a model table; throws a `PolicyFileError` naming the file, the field and the reason.
 * `surfaces` are the providers the gateway can reach; without `default_provider` the one whose shipped models are
 * every other name (`shippedModels.defaultModels`) takes the names no rule gives. A fallback must resolve to another model and
 * may not itself fall back further than that one attempt (its own fallback is never used).
 */
export function parseModelTable(
  path: string,
  text: string,
  surfaces: readonly Pick<Surface, "name" | "shippedModels">[],
): ModelTable {
  const root = parseTomlFile(path, text);
  checkKeys(path, root, topKeys, "");
  const reading = { path, providers: surfaces.map((surface) => surface.name) };
  const defaultProvider =
    root.default_provider === undefined
      ? surfaces.find((surface) => surface.shippedModels?.defaultModels)?.name
      : provider(reading, root.default_provider, "default_provider");
  if (defaultProvider === undefined) {
    throw new PolicyFileError(path, "default_provider", "must name the provider of the models no rule names");
  }
  const defaultReasoning = levels(reading, root.default_reasoning, "default_reasoning");
  const prefixes = tableArray(path, root.prefix, "prefix").map((rule, index): PrefixRule => {
    const field = `prefix[${index}]`;
    checkKeys(path, rule, prefixKeys, `${field}.`);
    const prefix = nonEmptyString(path, rule.prefix, `${field}.prefix`);
    return {
      prefix,
      provider: provider(reading, rule.provider, `${field}.provider`),
      reasoning: levels(reading, rule.reasoning, `${field}.reasoning`),
      fallback: optionalString(path, rule.fallback, `${field}.fallback`),
    };
  });
  // Longest prefix first, so that `gemini-2.5-` wins over `gemini-`.
  prefixes.sort((left, right) => right.prefix.length - left.prefix.length);
  const models = new Map<string, ModelEntry>();
  if (root.model !== undefined && !isObject(root.model))
    throw new PolicyFileError(path, "model", "must be a table of models");
  for (const [name, value] of Object.entries(root.model ?? {})) {
    const field = `model.${name}`;
    if (!isObject(value)) throw new PolicyFileError(path, field, "must be a table");
    checkKeys(path, value, modelKeys, `${field}.`);
    models.set(name, {
      name,
      provider: provider(reading, value.provider, `${field}.provider`),
      upstreamModel:
        value.upstream_model === undefined
          ? name
          : nonEmptyString(path, value.upstream_model, `${field}.upstream_model`),
      reasoning: levels(reading, value.reasoning, `${field}.reasoning`),
      fallback: optionalString(path, value.fallback, `${field}.fallback`),
      listed: true,
    });
  }
  const resolve = (name: string): ModelEntry => {
    const named = models.get(name);
    if (named !== undefined) return named;
    const rule = prefixes.find((candidate) => name.startsWith(candidate.prefix));
    return {
      name,
      provider: rule?.provider ?? defaultProvider,
      upstreamModel: name,
      reasoning: rule === undefined ? defaultReasoning : rule.reasoning,
      fallback: rule?.fallback,
      listed: false,
    };
  };
  for (const [name, entry] of models) checkFallback(path, `model.${name}.fallback`, entry, resolve);
  for (const [index, rule] of prefixes.entries()) {
    if (rule.fallback?.startsWith(rule.prefix)) {
      throw new PolicyFileError(
        path,
        `prefix[${index}].fallback`,
        "must not match its own prefix: a model would fall back to itself",
      );
    }
  }
  return { source: path, resolve, listed: () => [...models.values()] };
}

function checkFallback(path: string, field: string, entry: ModelEntry, resolve: (name: string) => ModelEntry): void {
  if (entry.fallback === undefined) return;
  if (entry.fallback === entry.name) throw new PolicyFileError(path, field, "names the model itself");
  resolve(entry.fallback);
}

/** Refuses a key the table does not take, naming the one it most likely meant. */
function checkKeys(path: string, table: JsonObject, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(table)) {
    if (known.includes(key)) continue;
    const meant = closestName(key, known);
    throw new PolicyFileError(
      path,
      `${prefix}${key}`,
      `is not a key of the model table${meant === undefined ? ` (it takes ${known.join(", ")})` : `; did you mean ${meant}?`}`,
    );
  }
}

function tableArray(path: string, value: unknown, field: string): JsonObject[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every(isObject)) {
    throw new PolicyFileError(path, field, `must be an array of tables ([[${field}]])`);
  }
  return value;
}

function nonEmptyString(path: string, value: unknown, field: string): string {
  if (typeof value !== "string" || value === "") throw new PolicyFileError(path, field, "must be a non-empty string");
  return value;
}

function optionalString(path: string, value: unknown, field: string): string | undefined {
  return value === undefined ? undefined : nonEmptyString(path, value, field);
}

function provider(reading: { path: string; providers: readonly string[] }, value: unknown, field: string): string {
  const name = nonEmptyString(reading.path, value, field);
  if (!reading.providers.includes(name)) {
    const meant = closestName(name, reading.providers);
    throw new PolicyFileError(
      reading.path,
      field,
      `"${name}" is no provider of this gateway${meant === undefined ? "" : `; did you mean ${meant}?`} (it has ${reading.providers.join(", ")})`,
    );
  }
  return name;
}

function levels(reading: { path: string }, value: unknown, field: string): ReasoningLevel[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new PolicyFileError(reading.path, field, "must be an array of reasoning levels");
  return value.map((level, index) => {
    const known = reasoningLevels.find((candidate) => candidate === level);
    if (known === undefined) {
      throw new PolicyFileError(
        reading.path,
        `${field}[${index}]`,
        `${JSON.stringify(level)} is not a reasoning level the gateway accepts (${reasoningLevels.join(", ")})`,
      );
    }
    return known;
  });
}

/** The model table of a policy folder: its `models.toml`, or the shipped default when it has none. */
export function modelTableOf(
  file: { path: string; text: string } | undefined,
  surfaces: readonly Pick<Surface, "name" | "shippedModels">[],
): ModelTable {
  if (file === undefined)
    return parseModelTable("(shipped default model table)", shippedModelTable(surfaces), surfaces);
  return parseModelTable(file.path, file.text, surfaces);
}
