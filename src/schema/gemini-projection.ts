import { LRUCache } from "lru-cache";
import { canonicalJson } from "../json/canonical-json.js";
import { Omissions } from "./gemini-projection-omissions.js";
import { outerShape } from "./gemini-projection-outer.js";
import { indexSchema } from "./gemini-projection-refs.js";
import { renderJsonSchema, renderOpenApiSchema } from "./gemini-projection-render.js";
import { walkSchema } from "./gemini-projection-walk.js";
import { refusalError } from "./schema-refusals.js";

/**
 * What Gemini's constrained decoding receives in place of the full response schema
 * (contract section 6). A projection is never stricter than the full schema: every instance
 * the full schema accepts, the projection accepts too; the rest stays with local validation.
 */

/** `nested` keeps the structure at every depth, `outer` the top level only, `none` passes through. */
export type ProjectionMode = "nested" | "outer" | "none";
export type ProjectionField = "responseJsonSchema" | "responseSchema";

export interface Projection {
  /** The schema to send in generationConfig[field]. */
  schema: unknown;
  /** What the projection left out, e.g. "/properties/next: oneOf reduced to common shape", "/properties/id: pattern". */
  omitted: string[];
}

export interface ProjectionOptions {
  /** The request field named in a 400 for a schema the gateway cannot take. */
  param?: string;
}

/**
 * Projects a full JSON Schema (draft-07 or 2020-12) for Gemini's `field`. Pure: the input is
 * never mutated and the output shares no objects with it, except in mode `none`. Throws
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
  const key = `${mode} ${field} ${param} ${canonicalJson(schema)}`;
  const cached = projections.get(key);
  if (cached !== undefined) return cached;
  let projection: Projection;
  try {
    projection = project(schema, mode, field, param);
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

function project(schema: unknown, mode: Exclude<ProjectionMode, "none">, field: ProjectionField, param: string) {
  const omissions = new Omissions(mode === "outer" ? 1 : Number.POSITIVE_INFINITY);
  const walked = walkSchema(schema, { index: indexSchema(schema, param), omissions, param });
  const projected = mode === "outer" ? outerShape(walked, omissions) : walked;
  const rendered =
    field === "responseSchema" ? renderOpenApiSchema(projected, omissions) : renderJsonSchema(projected, omissions);
  return { schema: rendered, omitted: omissions.list() };
}
