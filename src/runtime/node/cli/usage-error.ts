/**
 * A command line the CLI cannot run: a bad argument, an unknown policy, a file it cannot
 * read or parse. The CLI prints its message, never a stack trace, and exits with code 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";

  static isInstance(value: unknown): value is UsageError {
    return value instanceof UsageError;
  }
}
