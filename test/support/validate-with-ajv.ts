import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import { useSchemaValidators } from "../../src/schema/compile-validator.js";
import { createSchemaValidators } from "../../src/schema/schema-validators.js";

// The Node suite validates as the Node runtime does, with Ajv compiling (node-gateway.ts installs the same, with its
// worker thread). Inside workerd the same shared test files run with the default, interpretive validators, as the
// Workers runtime validates: so every shared schema test holds both validators to the same outcome.
useSchemaValidators(createSchemaValidators({ compiling: ajvSchemaCompiling() }));
