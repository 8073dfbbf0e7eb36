import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { bundledNamedSchemas, bundledValidators } from "../../src/runtime/workers/bundled-schemas.js";
import { compiledValidator, usePrecompiledValidators } from "../../src/schema/compile-validator.js";
import { validateAnswer } from "../../src/schema/diagnostics.js";
import { edgeDiagnosticsCases } from "../support/edge-diagnostics.js";

// Runs on Node (npm run test:node) and inside workerd (npm run test:workers): the same fixture holds both.

const inWorkerd = globalThis.navigator?.userAgent === "Cloudflare-Workers";
const schemas = bundledNamedSchemas();

function schemaOf(name: string): unknown {
  const schema = schemas.get(name);
  if (schema === undefined) throw new Error(`No bundled schema ${name}.`);
  return schema;
}

describe("diagnostics from the validators Ajv precompiled at build time (as on Workers)", () => {
  beforeAll(() => usePrecompiledValidators(bundledValidators(), { compileOthers: false }));
  afterAll(() => usePrecompiledValidators([], { compileOthers: true }));

  for (const entry of edgeDiagnosticsCases) {
    it(`are the fixture's for ${entry.name}`, () => {
      expect(validateAnswer(schemaOf(entry.schema), entry.answerText)).toEqual(entry.diagnostics);
    });
  }

  it("serve a client's copy of a named schema whose keys come in another order", () => {
    const named = schemaOf("investigation_bootstrap_v22") as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(named).reverse());
    expect(compiledValidator(reordered)).toBe(compiledValidator(named));
  });

  it("refuse any other schema with a 400 INVALID_REQUEST that names the precompiled schemas as the way out", () => {
    let caught: unknown;
    try {
      validateAnswer({ type: "object", required: ["a"] }, "{}");
    } catch (error) {
      caught = error;
    }
    expect(GatewayError.isInstance(caught)).toBe(true);
    const error = caught as GatewayError;
    expect([error.code, error.status]).toEqual(["INVALID_REQUEST", 400]);
    expect(error.message).toContain("only the named schemas compiled into it");
  });
});

// Skipped in workerd: there the test isolate happens to allow code generation, which a deployed worker forbids
// during a request, so Ajv compiling there would prove nothing about the edge.
describe.skipIf(inWorkerd)("diagnostics from Ajv compiling at run time (as on Node)", () => {
  for (const entry of edgeDiagnosticsCases) {
    it(`are the fixture's for ${entry.name}`, () => {
      expect(validateAnswer(schemaOf(entry.schema), entry.answerText)).toEqual(entry.diagnostics);
    });
  }

  it("compile a schema that no build step knew", () => {
    expect(validateAnswer({ type: "object", required: ["a"] }, "{}")).toMatchObject({ valid: false });
  });
});
