import { nestsDeeperThan } from "../http/read-body.js";
import type { CompiledValidator } from "./compiled-validator.js";
import {
  maxAnswerDepth,
  type Validation,
  type ValidationError,
  validateAnswer,
  validateParsedAnswer,
} from "./diagnostics.js";

/**
 * Diagnostics for a structured answer that the provider stopped before its end (finish_reason `length`,
 * Gemini `MAX_TOKENS`/`SAFETY`/`RECITATION`, Anthropic `max_tokens`, an incomplete Responses answer): the
 * text is then a prefix of JSON, and the client still gets the local full-schema diagnostics of what came
 * back (paths, required fields, hints) after a note that the answer was cut.
 */

/** At most this many errors are reported in all, as `validateAnswer` does: the incomplete note and 19 more. */
const maxErrors = 20;

/** A provider's stop reason is reported only when it is a short word; anything else could carry payload text. */
const reasonPattern = /^[A-Za-z_]{1,32}$/;

// Where the scan of `completePrefix` stands between two code units.
/** A value must come next: at the start, after `:`, or after `,` in an array. */
const expectValue = 0;
/** Just after `[`: a value or `]`. */
const expectValueOrArrayEnd = 1;
/** Just after `{`: a key or `}`. */
const expectKeyOrObjectEnd = 2;
/** After `,` in an object: a key. */
const expectKey = 3;
/** After a key: `:`. */
const expectColon = 4;
/** After a complete value: `,` or the closer of the open container, or only whitespace at the top level. */
const afterValue = 5;
/** Inside a string (a key or a value). */
const inString = 6;
/** Just after `\` inside a string. */
const inEscape = 7;
/** Inside the four hex digits of a `\u` escape. */
const inUnicodeEscape = 8;
/** Inside a number. */
const inNumber = 9;
/** Inside `true`, `false` or `null`. */
const inLiteral = 10;

// Where a number stands, after which part (RFC 8259 section 6).
/** After `-`: a digit must follow. */
const afterMinus = 0;
/** After a leading `0`: no digit may follow. */
const afterZero = 1;
/** Inside the integer digits (not starting with 0). */
const inInteger = 2;
/** After `.`: a digit must follow. */
const afterPoint = 3;
/** Inside the fraction digits. */
const inFraction = 4;
/** After `e`/`E`: a sign or a digit must follow. */
const afterExponentMark = 5;
/** After the exponent's sign: a digit must follow. */
const afterExponentSign = 6;
/** Inside the exponent digits. */
const inExponent = 7;

const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const colon = 0x3a;
const minus = 0x2d;
const plus = 0x2b;
const point = 0x2e;
const digitZero = 0x30;
const digitNine = 0x39;

function isWhitespace(unit: number): boolean {
  return unit === 0x20 || unit === 0x09 || unit === 0x0a || unit === 0x0d;
}

function isDigit(unit: number): boolean {
  return unit >= digitZero && unit <= digitNine;
}

function isHexDigit(unit: number): boolean {
  return isDigit(unit) || (unit >= 0x41 && unit <= 0x46) || (unit >= 0x61 && unit <= 0x66);
}

/** The characters that may follow `\` in a JSON string. */
function isEscapeLetter(unit: number): boolean {
  // " \ / b f n r t u
  return (
    unit === quote ||
    unit === backslash ||
    unit === 0x2f ||
    unit === 0x62 ||
    unit === 0x66 ||
    unit === 0x6e ||
    unit === 0x72 ||
    unit === 0x74 ||
    unit === 0x75
  );
}

/** Whether a number scan standing at `part` has read a whole number (it may still go on). */
function numberMayEnd(part: number): boolean {
  return part === afterZero || part === inInteger || part === inFraction || part === inExponent;
}

/** The number part after reading `unit` in `part`, or -1 when `unit` does not continue the number. */
function nextNumberPart(part: number, unit: number): number {
  const digit = isDigit(unit);
  switch (part) {
    case afterMinus:
      return unit === digitZero ? afterZero : digit ? inInteger : -1;
    case afterZero:
    case inInteger:
      if (unit === point) return afterPoint;
      if (unit === 0x65 || unit === 0x45) return afterExponentMark;
      return digit && part === inInteger ? inInteger : -1;
    case afterPoint:
    case inFraction:
      if (digit) return inFraction;
      return part === inFraction && (unit === 0x65 || unit === 0x45) ? afterExponentMark : -1;
    case afterExponentMark:
      if (unit === plus || unit === minus) return afterExponentSign;
      return digit ? inExponent : -1;
    default:
      return digit ? inExponent : -1;
  }
}

/**
 * The JSON value that a truncated JSON text is a prefix of, completed minimally:
 * - whatever was complete stays, at the same place;
 * - an incomplete trailing scalar is dropped: a string cut inside (or inside an escape), a partial
 *   `tru`/`fals`/`nul`, and a number with nothing after it (`12` might have been `123`); a number followed by
 *   `,` `]` `}` or whitespace is complete, and so is `true`/`false`/`null` spelled out;
 * - an incomplete object member is dropped: a key cut inside, a key without `:` or without a value, and a
 *   dangling `,`; a member whose value is an open object or array stays, with that value completed;
 * - then every open array and object is closed.
 *
 * Undefined when the text is empty or whitespace only, when it is not a prefix of any JSON text (leading
 * text such as a markdown fence, garbage, or a prefix already invalid before the cut), or when the top-level
 * value is itself an incomplete scalar. A text that is complete JSON gives its value (a top-level number
 * with nothing after it excepted: it may have been cut). One scan with an explicit stack: linear in the
 * text's length, and no recursion however deep the text nests.
 */
export function completePrefix(text: string): unknown | undefined {
  // The open containers, outermost first: whether each is an array, and the position just after its last
  // complete member (just after its opener while it has none).
  const isArray: boolean[] = [];
  const cutAfter: number[] = [];
  let state = expectValue;
  // Where the top-level value ends once it is complete.
  let topEnd = -1;
  // Whether the string being read is a key.
  let readingKey = false;
  let hexDigitsLeft = 0;
  let numberPart = afterMinus;
  let literal = "";
  let literalRead = 0;

  /** Records that a value ended just before `end`. */
  const valueEnded = (end: number): void => {
    const depth = cutAfter.length;
    if (depth === 0) topEnd = end;
    else cutAfter[depth - 1] = end;
    state = afterValue;
  };

  const length = text.length;
  let index = 0;
  while (index < length) {
    const unit = text.charCodeAt(index);
    switch (state) {
      case inString:
        if (unit === quote) {
          if (readingKey) state = expectColon;
          else valueEnded(index + 1);
        } else if (unit === backslash) state = inEscape;
        else if (unit < 0x20) return undefined;
        index++;
        continue;
      case inEscape:
        if (!isEscapeLetter(unit)) return undefined;
        if (unit === 0x75) {
          state = inUnicodeEscape;
          hexDigitsLeft = 4;
        } else state = inString;
        index++;
        continue;
      case inUnicodeEscape:
        if (!isHexDigit(unit)) return undefined;
        if (--hexDigitsLeft === 0) state = inString;
        index++;
        continue;
      case inLiteral:
        if (unit !== literal.charCodeAt(literalRead)) return undefined;
        index++;
        if (++literalRead === literal.length) valueEnded(index);
        continue;
      case inNumber: {
        const next = nextNumberPart(numberPart, unit);
        if (next !== -1) {
          numberPart = next;
          index++;
          continue;
        }
        if (!numberMayEnd(numberPart)) return undefined;
        // The number ended just before this unit, which is read again after a value.
        valueEnded(index);
        continue;
      }
    }
    index++;
    if (isWhitespace(unit)) continue;
    switch (state) {
      case expectValue:
      case expectValueOrArrayEnd:
        if (unit === closeBracket && state === expectValueOrArrayEnd) {
          isArray.pop();
          cutAfter.pop();
          valueEnded(index);
        } else if (unit === openBracket || unit === openBrace) {
          isArray.push(unit === openBracket);
          cutAfter.push(index);
          state = unit === openBracket ? expectValueOrArrayEnd : expectKeyOrObjectEnd;
        } else if (unit === quote) {
          state = inString;
          readingKey = false;
        } else if (unit === minus || isDigit(unit)) {
          state = inNumber;
          numberPart = unit === minus ? afterMinus : unit === digitZero ? afterZero : inInteger;
        } else if (unit === 0x74 || unit === 0x66 || unit === 0x6e) {
          state = inLiteral;
          literal = unit === 0x74 ? "true" : unit === 0x66 ? "false" : "null";
          literalRead = 1;
        } else return undefined;
        continue;
      case expectKeyOrObjectEnd:
      case expectKey:
        if (unit === closeBrace && state === expectKeyOrObjectEnd) {
          isArray.pop();
          cutAfter.pop();
          valueEnded(index);
        } else if (unit === quote) {
          state = inString;
          readingKey = true;
        } else return undefined;
        continue;
      case expectColon:
        if (unit !== colon) return undefined;
        state = expectValue;
        continue;
      default: {
        // After a value.
        const depth = isArray.length;
        if (depth === 0) return undefined;
        const inArray = isArray[depth - 1];
        if (unit === comma) state = inArray ? expectValue : expectKey;
        else if (unit === (inArray ? closeBracket : closeBrace)) {
          isArray.pop();
          cutAfter.pop();
          valueEnded(index);
        } else return undefined;
      }
    }
  }

  if (isArray.length === 0) {
    // The top-level value is complete only once a string, literal or container closed it; a number might go on.
    return topEnd === -1 ? undefined : JSON.parse(text.slice(0, topEnd));
  }
  // The innermost open container keeps its complete members; every open container is then closed.
  const closers: string[] = [];
  for (let depth = isArray.length - 1; depth >= 0; depth--) closers.push(isArray[depth] ? "]" : "}");
  return JSON.parse(text.slice(0, cutAfter[cutAfter.length - 1]) + closers.join(""));
}

/** The first error for a cut answer: that it was cut, and why, in a provider's own word. */
function incompleteNote(reason: string): ValidationError {
  const word = reasonPattern.test(reason) ? reason : "unknown";
  return {
    validation_path: "",
    validation_keyword: "incomplete",
    hint: `The provider stopped the answer before its end (reason: ${word}), so what came back is checked below against the full schema.`,
  };
}

/**
 * The full-schema errors of what came back: of the whole text when it parses (none when it is valid), else
 * of its minimal completion (see `completePrefix`), else the `json` error that `validateAnswer` gives.
 */
function errorsOfWhatCameBack(validator: CompiledValidator, answerText: string): ValidationError[] {
  // Too deep to walk (or not JSON at all): the outcome `validateAnswer` gives, the nesting or the `json` error.
  if (nestsDeeperThan(answerText, maxAnswerDepth)) return validateAnswer(validator, answerText).errors;
  let answer: unknown;
  try {
    answer = JSON.parse(answerText);
  } catch {
    answer = completePrefix(answerText);
    if (answer === undefined) return validateAnswer(validator, answerText).errors;
  }
  return validateParsedAnswer(validator, answer).errors;
}

/**
 * The diagnostics of an answer the provider stopped before its end (`reason`: its short stop word, such as
 * `length`, `MAX_TOKENS` or `SAFETY`; anything but `[A-Za-z_]{1,32}` is reported as `unknown`). Always
 * invalid: the first error says the answer was cut; the full-schema errors of what came back follow (see
 * `errorsOfWhatCameBack`), 20 errors at most in all. Like all diagnostics, no value of the answer appears.
 */
export function truncatedAnswerValidation(
  validator: CompiledValidator,
  answerText: string,
  reason: string,
): Validation {
  const errors = errorsOfWhatCameBack(validator, answerText);
  return { valid: false, errors: [incompleteNote(reason), ...errors.slice(0, maxErrors - 1)] };
}
