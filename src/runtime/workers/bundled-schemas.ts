import { ajvValidate } from "../../schema/ajv-validate.js";
import { type PrecompiledValidator, precompiledValidator } from "../../schema/compiled-validator.js";
import { isSchemaNode } from "../../schema/schema-nodes.js";
import { namedSchemas, namedSchemaValidators } from "./generated/assets.js";

/** The named schemas bundled at build time, by name, as `x-promptgate-schema` looks them up. */
export function bundledNamedSchemas(): Map<string, unknown> {
  return new Map(namedSchemas);
}

/** The build-time validator of every bundled named schema, keyed as `SchemaValidators.validatorFor` looks schemas up. */
export function bundledValidators(): PrecompiledValidator[] {
  return namedSchemas.map(([name, schema]) => {
    const validate = namedSchemaValidators[name];
    if (validate === undefined || (typeof schema !== "boolean" && !isSchemaNode(schema))) {
      throw new Error(`The bundled schema ${name} has no precompiled validator; run npm run build:worker-assets.`);
    }
    return precompiledValidator(schema, ajvValidate(validate));
  });
}
