/** A policy file the gateway refuses to start with: which file, which field, and why. */
export class PolicyFileError extends Error {
  override readonly name = "PolicyFileError";

  constructor(
    readonly file: string,
    /** A dotted path such as `window.limit_chars`, or `(root)` for the whole file. */
    readonly field: string,
    readonly reason: string,
    /** The whole message where `file: field: reason` reads badly; it starts with `file: ` too. */
    message?: string,
  ) {
    super(message ?? (field === "(root)" ? `${file}: ${reason}` : `${file}: ${field}: ${reason}`));
  }

  static isInstance(value: unknown): value is PolicyFileError {
    return value instanceof PolicyFileError;
  }
}
