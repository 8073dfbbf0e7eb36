import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { bundledNamedSchemas, bundledValidators } from "../../src/runtime/workers/bundled-schemas.js";
import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import { validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { createSchemaValidators, type SchemaValidators } from "../../src/schema/schema-validators.js";
import { edgeDiagnosticsCases } from "../support/edge-diagnostics.js";

// Runs on Node (npm run test:node) and inside workerd (npm run test:workers): the same fixture holds every way an
// answer is validated to the same diagnostics.

const schemas = bundledNamedSchemas();

function schemaOf(name: string): unknown {
  const schema = schemas.get(name);
  if (schema === undefined) throw new Error(`No bundled schema ${name}.`);
  return schema;
}

/** The answer's diagnostics from `validators`, as validateAnswer gives them for answer text. */
function diagnose(validators: SchemaValidators, schema: unknown, answerText: string) {
  let answer: unknown;
  try {
    answer = JSON.parse(answerText);
  } catch {
    return {
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: "The answer is not valid JSON." }],
    };
  }
  return validateParsedAnswer(validators.validatorFor(schema), answer);
}

/** A client's own copy of a named schema: equal in what it validates, but not the named schema, so not precompiled. */
function clientCopy(schema: unknown): unknown {
  return { ...(schema as Record<string, unknown>), "x-client-copy": true };
}

/** Workers' validators: the named schemas precompiled at build time, every other schema interpreted. */
const precompiled = bundledValidators();
const workers = createSchemaValidators({ precompiled });
const node = createSchemaValidators({ compiling: ajvSchemaCompiling() });
const interpretive = createSchemaValidators();

describe("diagnostics of the shared fixture's answers", () => {
  for (const entry of edgeDiagnosticsCases) {
    it(`are the fixture's for ${entry.name}, from the validator Ajv precompiled at build time (Workers)`, () => {
      const named = schemaOf(entry.schema);
      const ahead = precompiled.find(({ key }) => key === canonicalJson(named));
      expect(workers.validatorFor(named)).toBe(ahead?.validator);
      expect(diagnose(workers, named, entry.answerText)).toEqual(entry.diagnostics);
    });

    it(`are the fixture's for ${entry.name}, from a client's copy interpreted (Workers)`, () => {
      expect(diagnose(workers, clientCopy(schemaOf(entry.schema)), entry.answerText)).toEqual(entry.diagnostics);
    });

    it(`are the fixture's for ${entry.name}, from the interpretive validator`, () => {
      expect(diagnose(interpretive, schemaOf(entry.schema), entry.answerText)).toEqual(entry.diagnostics);
    });

    it(`are the fixture's for ${entry.name}, from Ajv compiling at run time (Node)`, () => {
      expect(diagnose(node, schemaOf(entry.schema), entry.answerText)).toEqual(entry.diagnostics);
    });
  }
});

describe("Workers' validators", () => {
  it("serve a client's copy of a named schema whose keys come in another order from the precompiled validator", () => {
    const named = schemaOf("investigation_bootstrap_v22") as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(named).reverse());
    expect(workers.validatorFor(reordered)).toBe(workers.validatorFor(named));
  });

  it("validate a schema no build step knew, with the diagnostics Node gives", () => {
    const schema = { type: "object", required: ["answer"], properties: { answer: { type: "string", minLength: 3 } } };
    for (const answer of ["{}", '{"answer": "no"}', '{"answer": 5}', '{"answer": "yes"}']) {
      expect(diagnose(workers, schema, answer)).toEqual(diagnose(node, schema, answer));
    }
    expect(diagnose(workers, schema, '{"answer": "yes"}')).toEqual({ valid: true, errors: [] });
  });
});

describe("the interpretive validator", () => {
  /** Runs `run` with the code generation Workers forbid during a request made to throw, as it does there. */
  function withoutCodeGeneration<T>(run: () => T): T {
    const original = globalThis.Function;
    const forbidden = new Proxy(original, {
      apply: () => {
        throw new EvalError("Code generation from strings disallowed for this context");
      },
      construct: () => {
        throw new EvalError("Code generation from strings disallowed for this context");
      },
    });
    globalThis.Function = forbidden;
    try {
      return run();
    } finally {
      globalThis.Function = original;
    }
  }

  it("compiles and validates a client schema without generating code", () => {
    const schema = { type: "object", properties: { n: { type: "integer", minimum: 1 } }, "x-no-codegen": 1 };
    const fresh = createSchemaValidators();
    const result = withoutCodeGeneration(() => diagnose(fresh, schema, '{"n": 0}'));
    expect(result).toMatchObject({ valid: false, errors: [{ validation_path: "/n", validation_keyword: "minimum" }] });
  });

  it("is held to that by a trap Ajv's compilation does not pass", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, "x-codegen-trap": 1 };
    const ajv = createSchemaValidators({ compiling: ajvSchemaCompiling() });
    expect(() => withoutCodeGeneration(() => ajv.validatorFor(schema))).toThrow();
  });
});
