import { isObject, type JsonObject } from "../json/json-object.js";

/** The `error.message` and `error.param` of a provider's error body, as one string to match against. */
export function errorMessageOf(errorBody: JsonObject): string {
  const error = isObject(errorBody.error) ? errorBody.error : {};
  return `${typeof error.param === "string" ? error.param : ""} ${typeof error.message === "string" ? error.message : ""}`;
}
