import { describe, expect, it } from "vitest";
import { isObject } from "../../src/json/json-object.js";
import {
  asArray,
  asObject,
  asString,
  optionalArray,
  optionalFlag,
  optionalObject,
  optionalString,
  textOf,
} from "../../src/surfaces/wire-fields.js";
import { expectInvalidRequest, gatewayErrorOf } from "./gateway-error-of.js";

describe("isObject", () => {
  it("accepts a plain object", () => {
    expect(isObject({ a: 1 })).toBe(true);
  });

  it("refuses null, arrays, strings and numbers", () => {
    for (const value of [null, [], "{}", 1, undefined, true]) expect(isObject(value)).toBe(false);
  });
});

describe("asObject, asArray and asString", () => {
  it("return the value when it has the wanted type", () => {
    const object = { a: 1 };
    const array = [1];
    expect(asObject(object, "x")).toBe(object);
    expect(asArray(array, "x")).toBe(array);
    expect(asString("s", "x")).toBe("s");
  });

  it("refuse an array where an object is wanted, naming the field", () => {
    expectInvalidRequest(() => asObject(["secret-value"], "messages[0]"), "messages[0]", ["secret-value"]);
  });

  it("refuse an object where an array is wanted, naming the field", () => {
    expectInvalidRequest(() => asArray({ text: "secret-value" }, "messages"), "messages", ["secret-value"]);
  });

  it("refuse a number where a string is wanted, naming the field", () => {
    expectInvalidRequest(() => asString(987654321, "model"), "model", ["987654321"]);
  });

  it("refuse undefined where a value is required", () => {
    expectInvalidRequest(() => asString(undefined, "messages[0].role"), "messages[0].role");
  });

  it("name the field in the message", () => {
    const error = gatewayErrorOf(() => asString(1, "messages[3].content[1].text"));
    expect(error.message).toContain("messages[3].content[1].text");
  });
});

describe("optional members", () => {
  it("read absent and null as undefined", () => {
    for (const value of [undefined, null]) {
      expect(optionalObject(value, "x")).toBeUndefined();
      expect(optionalArray(value, "x")).toBeUndefined();
      expect(optionalString(value, "x")).toBeUndefined();
    }
  });

  it("refuse a present value of the wrong type", () => {
    expectInvalidRequest(() => optionalObject("secret-value", "text"), "text", ["secret-value"]);
    expectInvalidRequest(() => optionalArray("secret-value", "tools"), "tools", ["secret-value"]);
    expectInvalidRequest(() => optionalString(["secret-value"], "model"), "model", ["secret-value"]);
  });

  it("read an absent or null flag as false", () => {
    expect(optionalFlag(undefined, "stream")).toBe(false);
    expect(optionalFlag(null, "stream")).toBe(false);
  });

  it("read a boolean flag as it is", () => {
    expect(optionalFlag(true, "stream")).toBe(true);
    expect(optionalFlag(false, "stream")).toBe(false);
  });

  it("refuse a flag that is not a boolean", () => {
    expectInvalidRequest(() => optionalFlag("secret-value", "stream"), "stream", ["secret-value"]);
  });
});

describe("textOf", () => {
  it("keeps a string as it is, without JSON quotes", () => {
    expect(textOf('{"id": 7}')).toBe('{"id": 7}');
  });

  it("writes a structured value as compact JSON", () => {
    expect(textOf({ id: 7, tags: ["a"] })).toBe('{"id":7,"tags":["a"]}');
  });

  it("writes numbers, booleans and null as JSON", () => {
    expect(textOf(7)).toBe("7");
    expect(textOf(false)).toBe("false");
    expect(textOf(null)).toBe("null");
  });

  it("turns undefined into the empty string", () => {
    expect(textOf(undefined)).toBe("");
  });
});
