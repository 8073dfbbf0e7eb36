/**
 * One failure of an answer as a validator reports it to the diagnostics, whichever validator it is (Ajv on Node,
 * the interpretive validator on Workers): where in the answer, which keyword where in the schema, and the keyword's
 * parameters under Ajv's names. It carries no message; the diagnostics never show an answer's value from it.
 */
export interface ValidatorError {
  /** JSON Pointer to the failing value in the answer. */
  readonly instancePath: string;
  /**
   * The failing keyword in the prepared schema, as Ajv writes it: a `#` fragment from the root, or from the `$ref`
   * Ajv inlined (the reference as written), or from the target of one it compiled apart (`#/…` relative to it).
   */
  readonly schemaPath: string;
  readonly keyword: string;
  /**
   * The keyword's parameters, by Ajv's names: `type`, `missingProperty`, `allowedValues`, `allowedValue`, `limit`,
   * `multipleOf`, `pattern`, `format`, `minContains`, `passingSchemas`, `tag`, `unevaluatedProperty`, …
   */
  readonly params: Readonly<Record<string, unknown>>;
  /** Set on the failure of a property name (inside `propertyNames`). */
  readonly propertyName?: string;
}
