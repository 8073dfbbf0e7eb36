/** The refusal of a Chat Completions field that the Anthropic Messages API has no counterpart for. */

import { type GatewayError, invalidRequest } from "../../../errors/gateway-error.js";

/**
 * The refusal of a field that has no counterpart. `droppable` names the parameter a policy may list
 * as droppable to have it dropped instead, when it may.
 */
export function noCounterpart(path: string, droppable?: string): GatewayError {
  const remedy =
    droppable === undefined ? "remove it" : `remove it, or list '${droppable}' under the policy's droppable parameters`;
  return invalidRequest(
    `'${path}' has no counterpart in the Anthropic Messages API; ${remedy}. Nothing was sent.`,
    path,
  );
}
