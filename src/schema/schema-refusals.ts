import { type GatewayError, invalidRequest } from "../errors/gateway-error.js";

/** Why the gateway cannot take a response schema. */
export type SchemaRefusal = "invalid" | "cycle" | "too-complex";

// Fixed texts: a schema is the client's content, and none of it belongs in an error.
const messages: Record<SchemaRefusal, string> = {
  invalid: "The response schema cannot be used: it is not a valid JSON Schema or it refers to another document.",
  cycle:
    "The response schema cannot be used: it refers to itself through allOf, anyOf, oneOf, not, if/then/else or $ref " +
    "alone, without moving into a part of the answer, so no answer could ever be checked against it.",
  "too-complex": "The response schema cannot be used: it nests too deeply or is too complex to compile.",
};

/** The 400 INVALID_REQUEST a refused response schema gets, before anything is sent. */
export function refusalError(refusal: SchemaRefusal, param = "response_schema"): GatewayError {
  return invalidRequest(messages[refusal], param);
}
