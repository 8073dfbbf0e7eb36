import type { InterpretedSchema } from "./interpreted-copy.js";
import { isSchemaNode } from "./schema-nodes.js";
import { interpretedBudget, stepsForAnswer, ValidationBudgetExhausted } from "./validation-budget.js";

/** Runs one pass of the interpretive validator over an answer within the work budget of a pass. */
export type BudgetedPass = <T>(answer: unknown, pass: (lookup: InterpretedSchema["lookup"]) => T) => T;

/**
 * Counts the references the interpretive validator follows during a pass, and stops the pass (it throws
 * `ValidationBudgetExhausted`) past the budget (see validation-budget.ts): each `$ref` is a lookup in the schema's
 * table, and each node with a `$recursiveRef` is read, though the validator then follows its anchor without a lookup.
 * The copy's `$recursiveRef`s become counting properties; outside a pass they read as they did.
 */
export function budgetedPasses(copy: InterpretedSchema): BudgetedPass {
  let steps = 0;
  let answer: unknown;
  let armed = false;
  let extended = false;
  const spend = () => {
    if (!armed) return;
    if (--steps < 0 && !extended) {
      // A large answer may take more, in proportion to its size: counted only for an answer that needs it.
      extended = true;
      steps += stepsForAnswer(answer, interpretedBudget) - interpretedBudget.base;
    }
    if (steps < 0) throw new ValidationBudgetExhausted();
  };
  const lookup = new Proxy(copy.lookup, {
    get(target, uri, receiver) {
      spend();
      return Reflect.get(target, uri, receiver);
    },
  });
  for (const node of Object.values(copy.lookup)) {
    if (!isSchemaNode(node) || typeof node.$recursiveRef !== "string") continue;
    const value = node.$recursiveRef;
    Object.defineProperty(node, "$recursiveRef", {
      get() {
        spend();
        return value;
      },
      enumerable: true,
      configurable: true,
    });
  }
  return (passAnswer, pass) => {
    steps = interpretedBudget.base;
    extended = false;
    answer = passAnswer;
    armed = true;
    try {
      return pass(lookup);
    } finally {
      armed = false;
      answer = undefined;
    }
  };
}
