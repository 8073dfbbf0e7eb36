import type { CliIo } from "../../src/runtime/node/cli/cli-io.js";

/** A command's io whose output is kept: what it wrote to stdout and to stderr, as text. */
export interface Captured {
  io: CliIo;
  stdout(): string;
  stderr(): string;
}

/** An io for one command run, with `env` as its environment. */
export function capture(env: Record<string, string> = {}): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { env, stdout: (text) => out.push(text), stderr: (text) => err.push(text) },
    stdout: () => out.join(""),
    stderr: () => err.join(""),
  };
}
