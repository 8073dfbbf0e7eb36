/** What a command reads and writes besides files: the environment and the two output streams. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What a command ends with: 0 when it did its job, 2 for a usage error, 1 for anything else. */
export type ExitCode = 0 | 1 | 2;
