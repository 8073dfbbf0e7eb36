import { dereference, type Schema, validate } from "@cfworker/json-schema";
import applicator2019 from "ajv/dist/refs/json-schema-2019-09/meta/applicator.json" with { type: "json" };
import content2019 from "ajv/dist/refs/json-schema-2019-09/meta/content.json" with { type: "json" };
import core2019 from "ajv/dist/refs/json-schema-2019-09/meta/core.json" with { type: "json" };
import format2019 from "ajv/dist/refs/json-schema-2019-09/meta/format.json" with { type: "json" };
import metaData2019 from "ajv/dist/refs/json-schema-2019-09/meta/meta-data.json" with { type: "json" };
import validation2019 from "ajv/dist/refs/json-schema-2019-09/meta/validation.json" with { type: "json" };
import schema2019 from "ajv/dist/refs/json-schema-2019-09/schema.json" with { type: "json" };
import applicator2020 from "ajv/dist/refs/json-schema-2020-12/meta/applicator.json" with { type: "json" };
import content2020 from "ajv/dist/refs/json-schema-2020-12/meta/content.json" with { type: "json" };
import core2020 from "ajv/dist/refs/json-schema-2020-12/meta/core.json" with { type: "json" };
import format2020 from "ajv/dist/refs/json-schema-2020-12/meta/format-annotation.json" with { type: "json" };
import metaData2020 from "ajv/dist/refs/json-schema-2020-12/meta/meta-data.json" with { type: "json" };
import unevaluated2020 from "ajv/dist/refs/json-schema-2020-12/meta/unevaluated.json" with { type: "json" };
import validation2020 from "ajv/dist/refs/json-schema-2020-12/meta/validation.json" with { type: "json" };
import schema2020 from "ajv/dist/refs/json-schema-2020-12/schema.json" with { type: "json" };
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };
import type { SchemaDialect } from "./prepare-schema.js";

// The meta-schemas Ajv checks every schema against before it compiles it (its own copies, JSON only), checked here
// by the interpretive validator, so that Workers refuse the malformed schemas Node refuses.

const documents: Record<SchemaDialect, readonly unknown[]> = {
  "draft-07": [draft07],
  "2019-09": [schema2019, core2019, applicator2019, validation2019, metaData2019, format2019, content2019],
  "2020-12": [
    schema2020,
    core2020,
    applicator2020,
    unevaluated2020,
    validation2020,
    metaData2020,
    format2020,
    content2020,
  ],
};

/** A dialect's meta-schema, ready for the interpretive validator. */
export interface MetaSchema {
  readonly root: Schema;
  readonly lookup: Record<string, Schema | boolean>;
}

/**
 * The meta-schema of a dialect, in a copy of its own. 2020-12's `$dynamicRef: "#meta"` is read as 2019-09's
 * `$recursiveRef: "#"` (and `$dynamicAnchor: "meta"` as `$recursiveAnchor: true`), which the interpretive validator
 * knows: in these documents the two mean the same, every vocabulary anchoring the one dynamic scope.
 */
export function metaSchema(dialect: SchemaDialect): MetaSchema {
  const [root, ...vocabularies] = documents[dialect].map(asRecursive) as Schema[];
  const lookup = dereference(root as Schema);
  for (const vocabulary of vocabularies) dereference(vocabulary, lookup);
  return { root: root as Schema, lookup };
}

/** Whether a schema is valid against its dialect's meta-schema. */
export function metaValid(meta: MetaSchema, schema: unknown): boolean {
  return validate(schema, meta.root, "2019-09", meta.lookup, true).valid;
}

function asRecursive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asRecursive);
  if (typeof value !== "object" || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key === "$dynamicRef") copy.$recursiveRef = "#";
    else if (key === "$dynamicAnchor") copy.$recursiveAnchor = true;
    else copy[key] = asRecursive(member);
  }
  return copy;
}
