import { contextRequestLimits } from "../../src/window/context-builder.js";
import { minPageChars } from "../../src/window/fragment.js";
import { unionChainDepth } from "./provider-answers.js";
import { alternativesChainSchema, unionChainSchema } from "./schemas.js";
import { authenticated, type Shot, schemaCallShot } from "./shots.js";

// Reproductions of single requests that stalled the gateway (items 3–6), sent one after another by the
// pathological lane. Each must come back quickly: refused (4xx), or answered within bounds. A 5xx or no answer
// within 10 s is a failure, and the event-loop figures of the soak show what each cost the serving thread.

/** The policy of the union-chain calls that refuses an invalid answer (422) instead of annotating it. */
export const strictPolicy = {
  file: "soak.strict.toml",
  toml: `name = "soak.strict"

[window]
enforce = true
target_chars = 50000
limit_chars = 200000
reserve_chars = 0

[validation]
enabled = true
on_invalid = "error"
`,
};

const toolkit = "/promptgate/window";

/** About a megabyte of compact JSON (1,041,790 characters): the rows of a large query result. */
const largeResult = {
  rows: Array.from({ length: 19_000 }, (_, id) => ({ id, note: `row ${id} of a large query result` })),
};

/** The large result in the smallest pages the gateway admits (200 characters: 5,209 pages). */
const smallPages = Math.ceil(JSON.stringify(largeResult).length / minPageChars);

/**
 * 0.94 MB of retrieved chunks for the context builder: each shares 32 of its 40 words with every other (a
 * Jaccard similarity of 0.67, under the default 0.8), so none is a near-duplicate of another and each was compared
 * with every passage chosen before it; every fourth repeats the one before it (1.0), a near-duplicate to skip.
 */
function nearDuplicateChunks(): Array<{ text: string; source: string; page: number; score: number }> {
  const shared = Array.from({ length: 32 }, (_, word) => `term${word}`).join(" ");
  return Array.from({ length: 2_400 }, (_, index) => {
    const own = index % 4 === 3 ? index - 1 : index;
    const words = Array.from({ length: 8 }, (_, word) => `chunk${own}word${word}`).join(" ");
    return { text: `${shared} ${words}`, source: "corpus.pdf", page: index, score: 1 - index / 10_000 };
  });
}

/**
 * As many chunks as the context route admits, their texts within its cap (450,532 of 500,000 characters): each of 96
 * short words every chunk holds and 13 of its own (a Jaccard similarity of 0.79, just under the default 0.8). The words every passage
 * holds fall in each one's rarest-first prefix, so each candidate is compared in full with every passage chosen before
 * it, up to the largest `top_k`.
 */
function similarChunksAtCaps(): Array<{ text: string; source: string; score: number }> {
  const { maxChunks, maxTextChars } = contextRequestLimits;
  const shared = Array.from({ length: 96 }, (_, word) => `s${word}`).join(" ");
  const chunks = Array.from({ length: maxChunks }, (_, index) => {
    const words = Array.from({ length: 13 }, (_, word) => `x${index.toString(36)}y${word.toString(36)}`).join(" ");
    return { text: `${shared} ${words}`, source: `doc${index % 7}.pdf`, score: 1 - index / 10_000 };
  });
  const textChars = chunks.reduce((sum, chunk) => sum + chunk.text.length, 0);
  // A 400 for the size would hide what this shot is for: say so at the start instead.
  if (textChars > maxTextChars)
    throw new Error(`The soak's chunks at the caps hold ${textChars} characters, over ${maxTextChars}.`);
  return chunks;
}

const chunks = nearDuplicateChunks();
const chunksAtCaps = similarChunksAtCaps();
const bodies = {
  signature: JSON.stringify({ schema: alternativesChainSchema(12) }),
  fragment: JSON.stringify({ value: largeResult, page_chars: 1 }),
  evidence: JSON.stringify(largeResult),
  context: JSON.stringify({ chunks, limit_chars: 2_000_000, top_k: chunks.length, max_per_document: chunks.length }),
  contextAtCaps: JSON.stringify({
    chunks: chunksAtCaps,
    limit_chars: 2_000_000,
    top_k: contextRequestLimits.maxTopK,
    max_per_document: contextRequestLimits.maxPerDocument,
  }),
};

/** What the lane sends: the body sizes, for the report. */
export const pathologicalSizes = {
  unionChainSchemaChars: JSON.stringify(unionChainSchema(unionChainDepth)).length,
  signatureBodyChars: bodies.signature.length,
  largeResultChars: bodies.evidence.length,
  contextBodyChars: bodies.context.length,
  contextChunks: chunks.length,
  contextAtCapsBodyChars: bodies.contextAtCaps.length,
  contextAtCapsChunks: chunksAtCaps.length,
};

function toolkitShot(kind: string, path: string, body: string, extra: Partial<Shot>): Shot {
  return { kind, path: `${toolkit}${path}`, body, headers: authenticated, stream: false, valid: false, ...extra };
}

const refused = (code: string) => ({ statuses: [400], code });

/**
 * The `n`-th shot of a pathological lane, ten in turn. A lane counts its own shots, so that a recall follows the
 * evidence it reads.
 */
export function pathologicalShot(n: number): Shot {
  const slot = n % 10;
  const turn = Math.floor(n / 10);
  const unionText = `Answer in the chained form ${n}. UNION-CHAIN-CALL`;
  switch (slot) {
    // Item 3: the answer fails the schema on every path. Annotated under the default policy, refused under strict.
    case 0:
      return schemaCallShot(turn, "union-chain-annotated", unionText, unionChainSchema(unionChainDepth), {
        valid: true,
        expect: { statuses: [200], validation: "invalid" },
      });
    case 1:
      return schemaCallShot(turn, "union-chain-refused", unionText, unionChainSchema(unionChainDepth), {
        policy: "soak.strict",
        valid: true,
        expect: { statuses: [422], code: "RESPONSE_SCHEMA_INVALID" },
      });
    // Item 4: 4^11 alternatives to inline.
    case 2:
      return toolkitShot("signature-deep-anyof", "/signature", bodies.signature, {
        untraced: true,
        expect: refused("INVALID_REQUEST"),
      });
    // Item 5: pages of one character, a million of them.
    case 3:
      return toolkitShot("fragment-page-chars-1", "/fragment", bodies.fragment, {
        untraced: true,
        expect: refused("INVALID_REQUEST"),
      });
    case 4:
      return toolkitShot("evidence-page-chars-1", "/evidence/soak-page-1?page_chars=1", bodies.evidence, {
        method: "PUT",
        untraced: true,
        expect: refused("INVALID_REQUEST"),
      });
    case 5: {
      // Nothing was kept by the PUT before: had it been, this recall would cut a million pages.
      const body = JSON.stringify({ kind: "recall", evidence_refs: ["soak-page-1"], page: 500_000 });
      return toolkitShot("recall-page-chars-1", "/recall", body, { expect: refused("EVIDENCE_NOT_FOUND") });
    }
    case 6:
      return toolkitShot(
        "evidence-small-pages",
        `/evidence/soak-small-pages?page_chars=${minPageChars}`,
        bodies.evidence,
        {
          method: "PUT",
          untraced: true,
          expect: { statuses: [200] },
        },
      );
    case 7: {
      // One page of the 5,209 the evidence before has: a recall cuts that page, not all of them.
      const page = (turn * 997) % smallPages;
      const body = JSON.stringify({ kind: "recall", evidence_refs: ["soak-small-pages"], page });
      return toolkitShot("recall-small-pages", "/recall", body, { expect: { statuses: [200] } });
    }
    // Item 6: thousands of passages, each compared with the ones chosen before it; then as many as are admitted.
    case 8:
      return toolkitShot("context-near-duplicates", "/context", bodies.context, {
        untraced: true,
        expect: { statuses: [200, 400] },
      });
    default:
      return toolkitShot("context-at-caps", "/context", bodies.contextAtCaps, {
        untraced: true,
        expect: { statuses: [200] },
      });
  }
}

/** The kinds of the pathological lane, in its order. */
export const pathologicalKinds = [
  "union-chain-annotated",
  "union-chain-refused",
  "signature-deep-anyof",
  "fragment-page-chars-1",
  "evidence-page-chars-1",
  "recall-page-chars-1",
  "evidence-small-pages",
  "recall-small-pages",
  "context-near-duplicates",
  "context-at-caps",
] as const;
