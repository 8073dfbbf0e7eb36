import { isObject } from "../../json/json-object.js";
import type { Policy } from "../../policy/policy.js";
import type { ProjectionField, ProjectionMode, UnionsProjection } from "./projection/projection.js";

/** A policy's `[gemini]` section: how a response schema is sent to Gemini. */
export interface GeminiPolicy {
  projection: ProjectionMode;
  schema_field: ProjectionField;
  /** How `nested` writes alternatives for `responseJsonSchema`; unset means `any_of`. */
  unions: UnionsProjection | undefined;
}

const projections: readonly ProjectionMode[] = ["nested", "outer", "none"];
const fields: readonly ProjectionField[] = ["responseJsonSchema", "responseSchema"];
const unionForms: readonly UnionsProjection[] = ["any_of", "common_shape"];

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.find((candidate) => candidate === value);
}

/**
 * The `[gemini]` section of a policy, which the policy schema (schemas/policy.schema.json) validates and fills with
 * its defaults when the policy is loaded; where a policy object holds none, the schema's defaults.
 */
export function geminiPolicyOf(policy: Policy): GeminiPolicy {
  const read = isObject(policy.gemini) ? policy.gemini : {};
  return {
    projection: oneOf(read.projection, projections) ?? "nested",
    schema_field: oneOf(read.schema_field, fields) ?? "responseJsonSchema",
    unions: oneOf(read.unions, unionForms),
  };
}
