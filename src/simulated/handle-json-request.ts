import type { JsonObject } from "./json-value.js";
import { type JsonBody, readJsonBody } from "./read-json-body.js";
import type { RequestProblem } from "./request-problem.js";

/** How one simulated endpoint checks, answers and refuses a JSON request. */
export interface JsonEndpoint {
  problemOf: (body: JsonObject) => RequestProblem | undefined;
  simulate: (input: JsonBody) => Response;
  /** Renders a problem in the provider's native 400 shape. */
  reject: (problem: RequestProblem) => Response;
  /** Rewrites the body before it is checked, e.g. to read a provider's alternative field names. */
  normalize?: (body: JsonObject) => JsonObject;
}

/** Reads the body, refuses it natively if it is unparseable or incomplete, else answers it. */
export async function handleJsonRequest(request: Request, endpoint: JsonEndpoint): Promise<Response> {
  const read = await readJsonBody(request);
  if (read === undefined) return endpoint.reject({ kind: "unparseable" });
  const input = endpoint.normalize ? { ...read, body: endpoint.normalize(read.body) } : read;
  const problem = endpoint.problemOf(input.body);
  if (problem !== undefined) return endpoint.reject(problem);
  return endpoint.simulate(input);
}
