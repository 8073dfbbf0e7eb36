import type { DepsOf } from "../deps.js";
import { invalidRequest } from "../errors/gateway-error.js";
import { citationsOf, type PolicyVersion } from "../policy/policy.js";
import { callerOf } from "../sessions/session-turn.js";
import type { KeptStore, SecretStore } from "../store/store.js";
import type { SurfaceRequest } from "./surface-request.js";
import type { CitationCheck } from "./validate-answer-body.js";

/** What a call's source index uses of the gateway: the store's kept sources and secret. */
type SourceDeps = DepsOf<KeptStore & SecretStore>;

/** A source index id, as `PUT /promptgate/window/sources/{id}` takes it: short, and safe to repeat in a message. */
export const sourceIndexId = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The citation check a call asks for with `x-promptgate-sources: ID`: the caller's source index of that id, at the
 * policy's citation pointer. Undefined without the header. INVALID_REQUEST for a malformed or unknown id, and for a
 * stream, whose answer goes out as it arrives and so cannot lose a citation before the client sees it.
 */
export async function citationCheckOf(
  deps: SourceDeps,
  input: SurfaceRequest,
  policy: PolicyVersion,
  stream: boolean,
): Promise<CitationCheck | undefined> {
  const id = input.request.headers.get("x-promptgate-sources");
  if (id === null) return undefined;
  const param = "x-promptgate-sources";
  if (!sourceIndexId.test(id)) {
    throw invalidRequest(
      "The x-promptgate-sources header names a source index: 1 to 64 letters, digits, '_', '.' or '-'.",
      param,
    );
  }
  if (stream) {
    throw invalidRequest(
      "Citations are checked on whole answers: a streamed answer reaches the client as it arrives. Send the call without stream, or without x-promptgate-sources. Nothing was sent.",
      param,
    );
  }
  const index = await deps.store.getSourceIndex(await callerOf(input), id, deps.now().getTime());
  if (index === undefined) {
    throw invalidRequest(
      "The x-promptgate-sources header names no source index kept for this caller (unknown, or expired): register it with PUT /promptgate/window/sources/{id}. Nothing was sent.",
      param,
    );
  }
  return { sources: index.sources, ...citationsOf(policy.policy) };
}
