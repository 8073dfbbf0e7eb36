import type { RepairRule } from "../policy/policy.js";
import { readPointer, replaceAtPointer } from "./json-pointer.js";

/** A repaired answer and the name of the rule that repaired it, both recorded with the call. */
export interface RepairOutcome {
  repaired: unknown;
  rule: string;
}

/**
 * The answer repaired by the first rule that applies, or `undefined` when none does.
 * Never mutates `answer`: the result shares every value off the repaired path.
 */
export function applyRepair(answer: unknown, rules: readonly RepairRule[]): RepairOutcome | undefined {
  for (const rule of rules) {
    const unwrapped = unwrappedValue(answer, rule);
    if (unwrapped !== undefined) {
      return { repaired: replaceAtPointer(answer, rule.at, unwrapped), rule: rule.name };
    }
  }
  return undefined;
}

/**
 * The one object inside the rule's envelope, or `undefined` when anything is ambiguous:
 * the guard value differs, the envelope has siblings, holds no or several alternatives,
 * or its element is not an object carrying `require_key`. Nothing is guessed or added.
 */
function unwrappedValue(answer: unknown, rule: RepairRule): Record<string, unknown> | undefined {
  const guard = readPointer(answer, rule.when.pointer);
  if (!guard.found || guard.value !== rule.when.equals) return undefined;
  const target = readPointer(answer, rule.at);
  if (!target.found || !isPlainObject(target.value)) return undefined;
  const keys = Reflect.ownKeys(target.value);
  if (keys.length !== 1 || keys[0] !== rule.envelope) return undefined;
  const envelope = target.value[rule.envelope];
  if (!Array.isArray(envelope) || envelope.length !== 1) return undefined;
  const [element] = envelope;
  if (!isPlainObject(element) || !Object.hasOwn(element, rule.require_key)) return undefined;
  return element;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
