import type { KeywordCxt, KeywordDefinition } from "ajv";
// Where Ajv defines its code template tag: its index re-exports it through a getter, which workerd's module shim
// does not see.
import { _ } from "ajv/dist/compile/codegen/code.js";
import type { AjvInstance } from "./ajv-instance.js";

/** The keywords through which Ajv's code calls the code of another schema, and so can repeat itself. */
const referenceKeywords = ["$ref", "$dynamicRef", "$recursiveRef"];

/**
 * What Ajv's code is called with as `this` (option `passContext`): the work left, in references followed. Code
 * compiled with `budgetedReferences` throws the context itself when it runs out.
 */
export interface AjvBudget {
  validationSteps: number;
}

/**
 * Makes every reference Ajv follows spend one step of the budget its code was called with (see ajvValidate): Ajv's
 * own definitions of the reference keywords, with a countdown before them. Code called without one spends nothing.
 */
export function budgetedReferences(ajv: AjvInstance): void {
  for (const keyword of referenceKeywords) {
    const definition = ajv.getKeyword(keyword);
    const code = typeof definition === "object" && "code" in definition ? definition.code : undefined;
    if (typeof definition !== "object" || code === undefined) continue;
    ajv.removeKeyword(keyword);
    const budgeted: KeywordDefinition = {
      ...definition,
      code(cxt: KeywordCxt, ruleType?: string) {
        // Code Ajv compiles at run time is sloppy: called without a context, its `this` is the global object.
        cxt.gen.if(_`typeof this?.validationSteps === "number" && --this.validationSteps < 0`, () =>
          cxt.gen.throw(_`this`),
        );
        code(cxt, ruleType);
      },
    };
    ajv.addKeyword(budgeted);
  }
}
