import type { JsonObject } from "../../src/json/json-object.js";
import { outputChars } from "../../src/surfaces/openai/responses-history.js";

/**
 * What a follow-up turn carries of a stored response's output: every output item, counted as the same item sent as
 * input would be (the rule itself is held to the independent oracle in test/oracle/responses-history.oracle.test.ts).
 */
export function heldOutput(response: object): number {
  return outputChars(response as JsonObject);
}
