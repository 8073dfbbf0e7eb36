/**
 * The failure classes of contract section 5: what went wrong upstream or in the
 * gateway, told apart by cause, never by how the provider worded it.
 */
export type FailureClass =
  | "authentication"
  | "account_selection"
  | "quota"
  | "rate_limit"
  | "model"
  | "worker"
  | "timeout"
  | "upstream"
  | "internal";

/**
 * A provider's answer that the client's own request is at fault. It reaches the client as the
 * native 4xx it is (with a fixed message), not as a failure class: retrying cannot help, and
 * the client has to change the request.
 */
export type RequestFault = "INVALID_REQUEST" | "NOT_FOUND" | "PAYLOAD_TOO_LARGE";

/** What a failed provider answer, or a provider call that got no answer, is classified as. */
export type UpstreamErrorCode = FailureClass | RequestFault;

/** The classes a client may retry (only these are transient). */
export const transientClasses: ReadonlySet<string> = new Set<FailureClass>([
  "rate_limit",
  "worker",
  "timeout",
  "upstream",
]);

/** The fixed message of each class: the only text a client gets for an upstream failure. */
export const upstreamErrorMessages: Readonly<Record<UpstreamErrorCode, string>> = {
  authentication: "The provider did not accept the credentials.",
  account_selection: "No usable provider account is selected for this call.",
  quota: "The provider account's quota is exhausted.",
  rate_limit: "The provider is limiting the request rate; retry later.",
  model: "The requested model is not available.",
  worker: "The provider is overloaded; retry later.",
  timeout: "The provider did not answer in time.",
  upstream: "The provider failed or could not be reached.",
  internal: "The gateway failed to handle this request.",
  INVALID_REQUEST: "The provider rejected the request as invalid.",
  NOT_FOUND: "The provider has no such resource.",
  PAYLOAD_TOO_LARGE: "The provider rejected the request as too large.",
};

/** The class of a provider status when nothing more specific is known about the answer. */
export function classOfStatus(status: number | undefined): UpstreamErrorCode {
  if (status === undefined) return "upstream";
  if (status === 401 || status === 403) return "authentication";
  if (status === 402) return "quota";
  if (status === 404) return "NOT_FOUND";
  if (status === 408 || status === 504) return "timeout";
  if (status === 413) return "PAYLOAD_TOO_LARGE";
  if (status === 429) return "rate_limit";
  if (status === 503 || status === 529) return "worker";
  if (status >= 400 && status < 500) return "INVALID_REQUEST";
  return "upstream";
}

/**
 * The status the client receives for a class, chosen so that each SDK's own retry logic does
 * the right thing: 429 for rate and quota limits (quota with `x-should-retry: false`), 503 or
 * the provider's 529 for an overloaded worker, 504 for a timeout, 502 for other upstream
 * failures, and the provider's own 4xx for the client's request faults.
 */
export function clientStatusOf(code: UpstreamErrorCode, upstreamStatus: number | undefined): number {
  switch (code) {
    case "authentication":
      return upstreamStatus === 403 ? 403 : 401;
    case "account_selection":
      return upstreamStatus === 401 ? 401 : 403;
    case "quota":
    case "rate_limit":
      return 429;
    case "model":
    case "NOT_FOUND":
      return 404;
    case "worker":
      return upstreamStatus === 529 ? 529 : 503;
    case "timeout":
      return 504;
    case "upstream":
      return 502;
    case "internal":
      return 500;
    case "PAYLOAD_TOO_LARGE":
      return 413;
    case "INVALID_REQUEST":
      return upstreamStatus !== undefined && upstreamStatus >= 400 && upstreamStatus < 500 ? upstreamStatus : 400;
  }
}
