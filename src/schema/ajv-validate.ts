import type { ErrorObject, ValidateFunction } from "ajv";
import type { AjvBudget } from "./ajv-budget.js";
import { ajvBudget, cutShort, maxReadErrors, stepsForAnswer, ValidationBudgetExhausted } from "./validation-budget.js";
import type { ValidatorError } from "./validator-error.js";

/**
 * An Ajv validate function (compiled at run time, or standalone code written at build time) as the neutral
 * validate function of `CompiledValidator`. Only types come from Ajv here: Workers bundle this file without Ajv.
 * Throws `ValidationBudgetExhausted` when the answer takes more work than one validation may (see ajv-budget.ts).
 */
export function ajvValidate(validate: ValidateFunction): (answer: unknown) => readonly ValidatorError[] {
  const run = (answer: unknown, steps: number): boolean | "exhausted" => {
    const budget: AjvBudget = { validationSteps: steps };
    try {
      return validate.call(budget, answer) as boolean;
    } catch (error) {
      if (error === budget) return "exhausted";
      throw error;
    }
  };
  return function validateWithAjv(answer) {
    let outcome = run(answer, ajvBudget.base);
    // A large answer may take more, in proportion to its size: counted only for an answer that needs it.
    if (outcome === "exhausted") {
      const steps = stepsForAnswer(answer, ajvBudget);
      outcome = steps > ajvBudget.base ? run(answer, steps) : outcome;
    }
    if (outcome === "exhausted") throw new ValidationBudgetExhausted();
    if (outcome) return [];
    const errors = validate.errors ?? [];
    if (errors.length <= maxReadErrors) return withoutContainedItems(errors);
    return [...withoutContainedItems(errors.slice(0, maxReadErrors)), cutShort];
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
