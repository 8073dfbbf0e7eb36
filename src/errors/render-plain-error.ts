import type { GatewayError } from "./gateway-error.js";
import { errorHeaders, promptgateMember } from "./promptgate-member.js";

/** promptgate's own error shape, for routes outside the provider surfaces. */
export function renderPlainError(error: GatewayError, ref: string): Response {
  const body = { error: { code: error.code, message: error.message, promptgate: promptgateMember(error, ref) } };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { ...errorHeaders(error), "x-promptgate-ref": ref },
  });
}
