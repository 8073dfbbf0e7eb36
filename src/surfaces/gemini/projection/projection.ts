import { LRUCache } from "lru-cache";
import { canonicalJson } from "../../../json/canonical-json.js";
import { indexSchema } from "../../../schema/schema-refs.js";
import { refusalError } from "../../../schema/schema-refusals.js";
import { renderJsonSchema } from "./json-schema.js";
import { Omissions } from "./omissions.js";
import { outerShape } from "./outer.js";
import { renderOpenApiSchema } from "./render.js";
import { walkSchema } from "./walk.js";

/**
 * What Gemini's constrained decoding receives in place of the full response schema
 * (contract section 6). A projection is never stricter than the full schema: every instance
 * the full schema accepts, the projection accepts too; the rest stays with local validation.
 */

/** `nested` keeps the structure at every depth, `outer` the top level only, `none` passes through. */
export type ProjectionMode = "nested" | "outer" | "none";
export type ProjectionField = "responseJsonSchema" | "responseSchema";
/**
 * How `nested` writes an `anyOf`/`oneOf` of several alternatives for `responseJsonSchema`:
 * `any_of` keeps them (Gemini enforces `anyOf`, and reads `oneOf` as `anyOf`); `common_shape`
 * writes one node that accepts what any of them accepts (the investigation contracts' form).
 * `outer` and `responseSchema` always write the common shape.
 */
export type UnionsProjection = "any_of" | "common_shape";

export interface Projection {
  /** The schema to send in generationConfig[field]. */
  schema: unknown;
  /** What the projection left out, e.g. "/properties/next: oneOf reduced to common shape", "/properties/id: pattern". */
  omitted: string[];
}

export interface ProjectionOptions {
  /** The request field named in a 400 for a schema the gateway cannot take. */
  param?: string;
  /** Default `any_of`. */
  unions?: UnionsProjection;
}

/**
 * Projects a full JSON Schema (draft-07 or 2020-12) for Gemini's `field`. For `responseJsonSchema`,
 * `nested` keeps references to definitions where they keep the schema small, maps as
 * `additionalProperties` and, unless `unions` says otherwise, alternatives as `anyOf`; for
 * `responseSchema`, which takes none of these, it writes everything in place and cuts cycles.
 * Pure: the input is never mutated and the output shares no objects with it, except in mode `none`. Throws
 * `INVALID_REQUEST` for an external or dangling `$ref`, a non-schema where a schema belongs,
 * or a schema too large to project.
 */
export function projectForGemini(
  schema: unknown,
  mode: ProjectionMode,
  field: ProjectionField,
  options: ProjectionOptions = {},
): Projection {
  if (mode === "none") return { schema, omitted: [] };
  const param = options.param ?? "response_schema";
  const unions = options.unions ?? "any_of";
  const key = `${mode} ${field} ${unions} ${param} ${canonicalJson(schema)}`;
  const cached = projections.get(key);
  if (cached !== undefined) return cached;
  let projection: Projection;
  try {
    projection = project(schema, mode, field, param, unions);
  } catch (error) {
    // The walks recurse over the schema: one that exhausts the stack is refused, not a 500.
    if (error instanceof RangeError) throw refusalError("too-complex", param);
    throw error;
  }
  projections.set(key, projection);
  return projection;
}

/**
 * Projections by mode, field and canonical schema: a controller sends the same few schemas again and again.
 * Bounded by an estimate of their bytes: the key, and the projected schema as objects (a few times its JSON).
 */
const projections = new LRUCache<string, Projection>({
  maxSize: 32 * 2 ** 20,
  sizeCalculation: (projection, key) =>
    key.length + 4 * JSON.stringify(projection.schema).length + projection.omitted.join("").length,
});

function project(
  schema: unknown,
  mode: Exclude<ProjectionMode, "none">,
  field: ProjectionField,
  param: string,
  unions: UnionsProjection,
): Projection {
  const omissions = new Omissions(mode === "outer" ? 1 : Number.POSITIVE_INFINITY);
  const jsonSchema = field === "responseJsonSchema";
  const walked = walkSchema(schema, {
    index: indexSchema(schema, param),
    omissions,
    param,
    unions: jsonSchema && mode === "nested" && unions === "any_of" ? "any-of" : "common-shape",
    maps: jsonSchema,
    references: jsonSchema && mode === "nested",
  });
  const projected = mode === "outer" ? outerShape(walked, omissions) : walked;
  const rendered = jsonSchema
    ? renderJsonSchema(projected, omissions, mode === "nested")
    : renderOpenApiSchema(projected, omissions);
  return { schema: rendered, omitted: omissions.list() };
}
