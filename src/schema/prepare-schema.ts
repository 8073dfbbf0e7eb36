import { withDiscriminators } from "./diagnose-discriminators.js";
import { inlineLocalRefs } from "./diagnose-inline-refs.js";
import { withoutDependentSchemas } from "./rewrite-dependent-schemas.js";
import type { SchemaNode } from "./schema-nodes.js";

/** The JSON Schema dialect a schema is validated under (draft-04/06 schemas go to draft-07). */
export type SchemaDialect = "draft-07" | "2019-09" | "2020-12";

/** A schema as every validator validates it, and the dialect it is validated under. */
export interface PreparedSchema {
  readonly dialect: SchemaDialect;
  readonly prepared: SchemaNode | boolean;
}

/** A schema as it is validated (by Ajv and by the interpretive validator alike), and its dialect. */
export function preparedSchema(schema: SchemaNode | boolean): PreparedSchema {
  if (typeof schema === "boolean") return { dialect: "2020-12", prepared: schema };
  const dialect = dialectOf(schema.$schema);
  return { dialect, prepared: prepare(schema, dialect) };
}

/**
 * Without `$schema` (the dialect stands for it), local references inlined (so error paths run from the root),
 * tagged unions marked for Ajv's discriminator (so only the alternative the tag names reports errors), and, where
 * `unevaluatedProperties` reads them, `dependentSchemas` as the `if`/`then` they mean (see withoutDependentSchemas).
 */
function prepare(schema: SchemaNode, dialect: SchemaDialect): SchemaNode {
  const { $schema: _dialect, ...rest } = schema;
  const marked = withDiscriminators(inlineLocalRefs(rest) ?? rest);
  // Draft-07 knows neither keyword: there `dependentSchemas` is a vendor keyword and stays one.
  const evaluates = dialect !== "draft-07" && JSON.stringify(marked).includes('"unevaluatedProperties"');
  return evaluates ? withoutDependentSchemas(marked) : marked;
}

function dialectOf(metaSchema: unknown): SchemaDialect {
  const uri = typeof metaSchema === "string" ? metaSchema : "";
  if (/draft\/2019-09\b/.test(uri)) return "2019-09";
  if (/draft-0[4-7]\b/.test(uri)) return "draft-07";
  return "2020-12";
}
