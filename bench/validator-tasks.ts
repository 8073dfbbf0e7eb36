// The validator comparison's tasks, with no `node:` import: bench/validators.ts runs them on Node, and
// bench/workerd-validators.ts inside workerd (bundled into a worker), so that both runtimes time the same code.

import { canonicalJson } from "../src/json/canonical-json.js";
import { bundledValidators } from "../src/runtime/workers/bundled-schemas.js";
import { namedSchemas } from "../src/runtime/workers/generated/assets.js";
import type { CompiledValidator, SchemaCompiling } from "../src/schema/compiled-validator.js";
import { validateParsedAnswer } from "../src/schema/diagnostics.js";
import { interpretedSchemaCompiling } from "../src/schema/interpret-schema.js";

/** The ways an answer can be validated: Ajv compiling (Node), Ajv's standalone code (named schemas), interpretation. */
export type ValidatorVariant = "ajv" | "standalone" | "interpreted";

/** What one timed operation does. */
export type ValidatorTask = "valid" | "invalid-diagnostics" | "cold-compile";

export const investigationSchemaName = "investigation_bootstrap_v22";

export function investigationSchemaOf(): Record<string, unknown> {
  const found = namedSchemas.find(([name]) => name === investigationSchemaName);
  if (found === undefined) throw new Error(`${investigationSchemaName} is not bundled.`);
  return found[1] as Record<string, unknown>;
}

/** The investigation answer broken in five places (an unknown member, a bad enum, a missing member, a bad tag). */
export function brokenAnswer(valid: Record<string, unknown>): unknown {
  const answer = structuredClone(valid) as {
    update: { working_brief: { findings: Record<string, unknown>[] } };
    next: Record<string, unknown>;
  };
  const [first, second] = answer.update.working_brief.findings;
  if (first !== undefined) first.direction = "agrees";
  if (second !== undefined) {
    delete second.evidence_refs;
    second.extra_note = "x";
  }
  answer.next = { action: "recall", arguments: { kind: "recall", evidence_refs: [], page: -1 }, rationale: "r" };
  return answer;
}

/**
 * A function that runs one task once, for a variant. `compiling` is Ajv's (Node only; Workers cannot generate code),
 * left out inside workerd, where the "ajv" variant is not run.
 */
export function validatorTask(
  variant: ValidatorVariant,
  task: ValidatorTask,
  answers: { valid: unknown; invalid: unknown },
  ajvCompiling?: SchemaCompiling,
): () => unknown {
  const schema = investigationSchemaOf();
  const compiling =
    variant === "ajv" ? ajvCompiling : variant === "interpreted" ? interpretedSchemaCompiling() : undefined;
  if (task === "cold-compile") {
    if (compiling === undefined) throw new Error(`${variant} does not compile at run time.`);
    let distinct = 0;
    return () => {
      const fresh = { ...schema, description: `cold ${distinct++}` };
      const outcome = compiling.compile(fresh, canonicalJson(fresh));
      if ("release" in outcome) outcome.release?.();
      return outcome;
    };
  }
  const validator = validatorOf(variant, schema, compiling);
  if (task === "valid") return () => validator.validate(answers.valid);
  return () => validateParsedAnswer(validator, answers.invalid);
}

function validatorOf(
  variant: ValidatorVariant,
  schema: unknown,
  compiling: SchemaCompiling | undefined,
): CompiledValidator {
  if (variant === "standalone") {
    const found = bundledValidators().find(({ key }) => key === canonicalJson(schema));
    if (found === undefined) throw new Error("No standalone validator for the investigation schema.");
    return found.validator;
  }
  if (compiling === undefined) throw new Error(`No compiler for ${variant}.`);
  const outcome = compiling.compile(schema, canonicalJson(schema));
  if ("refusal" in outcome) throw new Error(`The investigation schema was refused: ${outcome.refusal}.`);
  return outcome.validator;
}
