/** The stages of a provider call that each have a timeout of their own (contract section 11). */
export type UpstreamTimeoutStage = "connect" | "first_byte" | "idle";

/** The reason a provider request is aborted with when one of its stages' timeouts fires; holds no request data. */
export class UpstreamTimedOut extends Error {
  override readonly name = "TimeoutError";
  readonly stage: UpstreamTimeoutStage;

  constructor(stage: UpstreamTimeoutStage) {
    super(`The upstream ${stage} timeout fired.`);
    this.stage = stage;
  }

  static isInstance(value: unknown): value is UpstreamTimedOut {
    return value instanceof UpstreamTimedOut;
  }
}
