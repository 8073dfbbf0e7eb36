import type { DepsOf } from "../deps.js";
import type { PromptSize } from "../errors/prompt-size.js";
import { embeddedJsonObjects } from "../json/embedded-json.js";
import type { JsonObject } from "../json/json-object.js";
import { sha256Hex } from "../json/sha256-hex.js";
import { type LogicalCall, textString } from "../logical-call.js";
import { type AnsweredTurn, keepTurn } from "../sessions/session-turn.js";
import type { CachedPrefixStore, ResponseHistoryStore, SecretStore, SessionStore } from "../store/store.js";
import type { PrefixEffect, PrefixEffectReader } from "../surfaces/surface.js";
import type { CallRecorder } from "./call-recorder.js";
import type { UpstreamCall } from "./upstream-call.js";

/** What remembering an answer uses of the gateway: the store's cached prefixes, response histories, sessions and secret. */
type PrefixDeps = DepsOf<CachedPrefixStore & ResponseHistoryStore & SessionStore & SecretStore>;

/** A call as it was measured: what a created prefix is recorded from. */
export interface MeasuredCall {
  call: LogicalCall;
  size: PromptSize;
  /** The session turn the call is, where its route has sessions. */
  turn?: AnsweredTurn | undefined;
  /** The provider call: its client's credential names the principal a created cached content is kept for. */
  upstream: UpstreamCall;
}

/** At most this many embedded JSON objects of a cached text are remembered for schema de-duplication. */
const maxSchemaHashes = 512;

/**
 * Remembers what a successful answer (a whole body, or a stream's final response) left at the
 * provider, where its route reads an effect. A store that fails to take it does not fail the answer,
 * which the provider has given: the failure goes to the call's recorder (record and log), and a
 * later call that refers to the prefix finds it unknown, which its policy's unknown-prefix rule covers.
 */
export async function rememberAnswer(
  deps: PrefixDeps,
  readEffect: PrefixEffectReader | undefined,
  answer: { response: JsonObject; path: string; measured: MeasuredCall | undefined },
  recorder: CallRecorder,
): Promise<void> {
  try {
    const effect = readEffect?.(answer.response, answer.path, deps.now().getTime());
    if (effect !== undefined) await rememberPrefix(deps, effect, answer.measured, answer.response);
  } catch (cause) {
    recorder.internal(cause, "remember-prefix");
  }
}

/**
 * Records what a successful answer left at the provider. A created cached content is kept
 * for the caller's principal, with the characters the provider check measured and the hashes of the JSON objects its
 * text embeds; a stored response with its cumulative history: the prior history, this
 * turn's input and its output, which a background response adds once it is seen ended; a session's turn with its
 * session (see `keepTurn`).
 */
async function rememberPrefix(
  deps: PrefixDeps,
  effect: PrefixEffect,
  measured: MeasuredCall | undefined,
  response: JsonObject,
): Promise<void> {
  switch (effect.kind) {
    case "cached-content-created": {
      if (measured === undefined) return;
      const { call, size } = measured;
      return deps.store.putCachedPrefix({
        name: effect.name,
        principal: await measured.upstream.caller.principal(),
        chars: size.total_chars,
        schemaHashes: await schemaHashes(call),
        expiresAt: effect.expiresAt,
      });
    }
    case "cached-content-expiry":
      return deps.store.updateCachedPrefixExpiry(effect.name, effect.expiresAt);
    case "cached-content-deleted":
      return deps.store.deleteCachedPrefix(effect.name);
    case "response-stored": {
      if (measured === undefined) return;
      // Every category of the turn's input, the history before it included: instructions, tools and the schema are
      // not carried into a follow-up turn, and counting them errs on the safe side.
      const stored = {
        id: effect.id,
        chars: measured.size.total_chars + (effect.outputChars ?? 0),
        outputKnown: effect.outputChars !== undefined,
        expiresAt: effect.expiresAt,
      };
      if (measured.turn !== undefined) return keepTurn(deps, measured.turn, stored, response);
      return deps.store.putResponseHistory(stored);
    }
    case "response-ended":
      return deps.store.completeResponseHistory(effect.id, effect.outputChars);
    case "response-deleted":
      return deps.store.deleteResponseHistory(effect.id);
  }
}

async function schemaHashes(call: LogicalCall): Promise<string[]> {
  const canonicals = new Set<string>();
  for (const text of [...call.system, ...call.messages]) {
    for (const canonical of embeddedJsonObjects(textString(text), maxSchemaHashes)) canonicals.add(canonical);
    if (canonicals.size >= maxSchemaHashes) break;
  }
  return Promise.all([...canonicals].slice(0, maxSchemaHashes).map(sha256Hex));
}
