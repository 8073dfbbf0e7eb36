import type { ErrorObject, ValidateFunction } from "ajv";
import type { ValidatorError } from "./validator-error.js";

/**
 * An Ajv validate function (compiled at run time, or standalone code written at build time) as the neutral
 * validate function of `CompiledValidator`. Only types come from Ajv here: Workers bundle this file without Ajv.
 */
export function ajvValidate(validate: ValidateFunction): (answer: unknown) => readonly ValidatorError[] {
  return function validateWithAjv(answer) {
    if (validate(answer)) return [];
    return withoutContainedItems(validate.errors ?? []);
  };
}

/**
 * Ajv also reports each item that fails a `contains` schema, though the array needs only some to match: those are
 * not failures of the answer (the `contains` error is), and the interpretive validator reports none of them.
 */
function withoutContainedItems(errors: readonly ErrorObject[]): ErrorObject[] {
  const contains = errors.filter((error) => error.keyword === "contains");
  if (contains.length === 0) return [...errors];
  return errors.filter(
    (error) =>
      !contains.some(
        ({ schemaPath, instancePath }) =>
          error.schemaPath.startsWith(`${schemaPath}/`) && error.instancePath.startsWith(`${instancePath}/`),
      ),
  );
}
