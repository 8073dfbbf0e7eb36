import { invalidRequest } from "../errors/gateway-error.js";
import { isObject, type JsonObject } from "../json/json-object.js";

/** The value as a JSON object, or INVALID_REQUEST naming the field. */
export function asObject(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw invalidRequest(`'${path}' must be an object.`, path);
  return value;
}

/** The value as an array, or INVALID_REQUEST naming the field. */
export function asArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw invalidRequest(`'${path}' must be an array.`, path);
  return value;
}

/** The value as a string, or INVALID_REQUEST naming the field. */
export function asString(value: unknown, path: string): string {
  if (typeof value !== "string") throw invalidRequest(`'${path}' must be a string.`, path);
  return value;
}

/** An optional member: absent or null gives undefined; otherwise it must be an object. */
export function optionalObject(value: unknown, path: string): JsonObject | undefined {
  return value === undefined || value === null ? undefined : asObject(value, path);
}

/** An optional member: absent or null gives undefined; otherwise it must be an array. */
export function optionalArray(value: unknown, path: string): unknown[] | undefined {
  return value === undefined || value === null ? undefined : asArray(value, path);
}

/** An optional member: absent or null gives undefined; otherwise it must be a string. */
export function optionalString(value: unknown, path: string): string | undefined {
  return value === undefined || value === null ? undefined : asString(value, path);
}

/** An optional boolean member: absent or null gives false. */
export function optionalFlag(value: unknown, path: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw invalidRequest(`'${path}' must be a boolean.`, path);
  return value;
}

/** Text the model sees of a structured value: a string as it is, anything else as compact JSON. */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? "";
}
