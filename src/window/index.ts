/*
 * `promptgate/window`: the window toolkit for controllers that fit their work into the gateway's bounded window.
 * Every size it reports is counted as the gateway counts (Unicode code points).
 */

export { type CitationOptions, checkCitations, type RemovedCitation } from "./citations.js";
export { codePoints } from "./code-points.js";
export {
  buildContext,
  type Chunk,
  type ContextBlock,
  type ContextOptions,
  contextRequestLimits,
  contextSeparator,
  type SelectedChunk,
} from "./context-builder.js";
export {
  checkpointDue,
  defaultCheckpointBytes,
  defaultPageChars,
  fragment,
  type JsonFragment,
  maxPageChars,
  minPageChars,
} from "./fragment.js";
export {
  describeSchema,
  formExample,
  formExampleLabel,
  SchemaExpansionError,
  signature,
  signatureLimits,
} from "./signature.js";
