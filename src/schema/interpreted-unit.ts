import type { OutputUnit } from "@cfworker/json-schema";
import type { InterpretedLocation } from "./interpreted-location.js";

/** One error of the interpretive validator, with its place in the answer and in the schema. */
export interface Unit {
  readonly unit: OutputUnit;
  readonly instancePath: string;
  readonly location: InterpretedLocation;
}
