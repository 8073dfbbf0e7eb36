import type { PromptSize } from "../errors/prompt-size.js";

/**
 * The headers the gateway adds to a call's response: its ref, and what the call's steps established (the prompt
 * size, the model that answered, a fallback, the validation outcome, removed citations). Each is set by name here;
 * a response reads them all at once.
 */
export class ResponseHeaders {
  readonly #headers: Record<string, string>;

  constructor(ref: string) {
    this.#headers = { "x-promptgate-ref": ref };
  }

  /** The call's ref, as its response names it. */
  get ref(): string {
    return this.#headers["x-promptgate-ref"] ?? "";
  }

  /** The preflight check's size. */
  promptSize(size: PromptSize): void {
    this.#headers["x-promptgate-prompt-size"] = JSON.stringify(size);
  }

  /** The model table's entry that answered. */
  model(name: string): void {
    this.#headers["x-promptgate-model"] = name;
  }

  /** The first model and its fallback, when a fallback answered. */
  modelFallback(from: string, to: string): void {
    this.#headers["x-promptgate-model-fallback"] = `${from}_to_${to}`;
  }

  /** Whether a whole answer was valid against its full schema. */
  validation(valid: boolean): void {
    this.#headers["x-promptgate-validation"] = valid ? "valid" : "invalid";
  }

  /** How many citations were taken out of the answer. */
  citationsRemoved(count: number): void {
    this.#headers["x-promptgate-citations-removed"] = String(count);
  }

  /** The remaining room of the call's limits over time (`x-ratelimit-*`, `x-promptgate-remaining-chars`). */
  limits(headers: Readonly<Record<string, string>>): void {
    Object.assign(this.#headers, headers);
  }

  /** The headers as they stand now, for a response. */
  all(): Record<string, string> {
    return { ...this.#headers };
  }
}
