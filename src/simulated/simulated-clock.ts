/** The simulated provider's clock; only the times of cached contents read it, never an answer's text or ids. */
export type SimulatedClock = () => Date;

/** The wall clock. */
export const systemClock: SimulatedClock = () => new Date();
