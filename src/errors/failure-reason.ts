const errorCode = /^[A-Z][A-Z0-9_]{1,63}$/;
const errorName = /^[A-Za-z]{1,60}$/;

/**
 * Why a provider call got no answer, as a log line may show it: the first error code of the cause
 * chain (`ECONNREFUSED`, `ETIMEDOUT`, `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_SOCKET`), else the error's
 * class (`AbortError`, `TypeError`). Only such identifiers: an error's message may carry the URL, its
 * query (a `key=`), or what the gateway was sending.
 */
export function failureReason(cause: unknown): string {
  let current: unknown = cause;
  let name: string | undefined;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && errorCode.test(code)) return code;
    if (name === undefined && errorName.test(current.name) && current.name !== "Error") name = current.name;
    current = current.cause;
  }
  return name ?? "no_answer";
}

/** A provider status as a class, `http_5xx`: the reason of a failed answer. */
export function statusReason(status: number): string {
  return `http_${Math.floor(status / 100)}xx`;
}
