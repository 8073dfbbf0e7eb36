import { GatewayError } from "../errors/gateway-error.js";

/** What one principal may keep at once: entries, and their code points in all (a source index's as a JSON array). */
export const keptLimits = {
  evidence: { count: 1_000, chars: 50_000_000 },
  source_index: { count: 1_000, chars: 5_000_000 },
} as const;

/**
 * What all pass-through callers keep together, results and source indexes alike. In pass-through any credential is
 * accepted and each is its own principal, so per-principal limits alone would let invented keys multiply storage.
 */
export const passThroughLimits = { count: 10_000, chars: 100_000_000 } as const;

/** How long kept results and source indexes can be read: a case resumed within a week finds them. */
export const keptForMs = 7 * 24 * 60 * 60 * 1000;

/** One kept result or source index, by its principal and id. */
export interface WindowEntry {
  kind: "evidence" | "source_index";
  principal: string;
  id: string;
}

/** What the quotas read of the store: what a principal, and all principals, keep now, but for the entry being put. */
export interface KeptUsage {
  evidenceUsage(principal: string, now: number, except: string): Promise<{ count: number; chars: number }>;
  sourceIndexUsage(principal: string, now: number, except: string): Promise<{ count: number; chars: number }>;
  windowUsage(now: number, except: WindowEntry): Promise<{ count: number; chars: number }>;
}

/** The quotas of kept results and source indexes, checked and applied one put at a time. */
export interface KeptQuota {
  /** Runs `put` once the entry, of `chars` code points, fits its principal's quota and, in pass-through, the shared one. */
  keep(entry: WindowEntry, chars: number, now: number, put: () => Promise<void>): Promise<void>;
}

/**
 * The quotas of one app. A check and its put run one after another, never beside another put of the same app, so
 * that the count is exact within one process; processes sharing a store each check against what it holds, so puts
 * running at once on several may pass a quota by as many as run at once.
 */
export function keptQuota(store: KeptUsage, passThrough: boolean): KeptQuota {
  let previous: Promise<unknown> = Promise.resolve();
  return {
    keep(entry, chars, now, put) {
      const turn = previous.then(async function keepWithinQuota() {
        const own =
          entry.kind === "evidence"
            ? await store.evidenceUsage(entry.principal, now, entry.id)
            : await store.sourceIndexUsage(entry.principal, now, entry.id);
        const limits = keptLimits[entry.kind];
        if (own.count + 1 > limits.count || own.chars + chars > limits.chars) throw ownLimitError(entry.kind);
        if (passThrough) {
          const shared = await store.windowUsage(now, entry);
          if (shared.count + 1 > passThroughLimits.count || shared.chars + chars > passThroughLimits.chars) {
            throw passThroughLimitError();
          }
        }
        await put();
      });
      previous = turn.catch(() => undefined);
      return turn;
    },
  };
}

function ownLimitError(kind: WindowEntry["kind"]): GatewayError {
  if (kind === "evidence") {
    const { count, chars } = keptLimits.evidence;
    return new GatewayError(
      "EVIDENCE_LIMIT",
      400,
      `A caller keeps at most ${count} results of ${chars} characters in all; this one would pass that. Delete ` +
        "results it no longer needs (DELETE /promptgate/window/evidence/{id}), or let them expire.",
    );
  }
  const { count, chars } = keptLimits.source_index;
  return new GatewayError(
    "SOURCE_INDEX_LIMIT",
    400,
    `A caller keeps at most ${count} source indexes of ${chars} characters of source ids in all (as JSON arrays); ` +
      "this one would pass that. Replace an index it no longer needs (PUT under its id), or let them expire.",
  );
}

function passThroughLimitError(): GatewayError {
  const { count, chars } = passThroughLimits;
  return new GatewayError(
    "PASS_THROUGH_STORAGE_LIMIT",
    400,
    `In pass-through, all callers together keep at most ${count} results and source indexes of ${chars} ` +
      "characters in all; this one would pass that. Delete results no longer needed or let them expire (7 days), " +
      "or ask the operator for gateway keys, under which each key has its own quota only.",
  );
}
