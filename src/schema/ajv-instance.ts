import type { Ajv } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";

/** An Ajv instance of one of the three dialect classes. */
export type AjvInstance = Ajv | Ajv2019 | Ajv2020;
