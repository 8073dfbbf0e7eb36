import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/config.js";

describe("PROMPTGATE_KEYS", () => {
  it("is pass-through auth when unset or empty", () => {
    expect(readConfig({}).gatewayKeys).toEqual([]);
    expect(readConfig({ PROMPTGATE_KEYS: "" }).gatewayKeys).toEqual([]);
  });

  it("holds comma-separated keys, trimmed, empty entries dropped", () => {
    expect(readConfig({ PROMPTGATE_KEYS: " key-one ,key-two,, " }).gatewayKeys).toEqual(["key-one", "key-two"]);
  });

  it("refuses a value that holds no key, without echoing it", () => {
    const error = (() => {
      try {
        readConfig({ PROMPTGATE_KEYS: " , , " });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("PROMPTGATE_KEYS");
  });
});

describe("PROMPTGATE_LOG", () => {
  it("is info by default", () => {
    expect(readConfig({}).logLevel).toBe("info");
  });

  it.each(["silent", "warn", "DEBUG"])("takes %s", (level) => {
    expect(readConfig({ PROMPTGATE_LOG: level }).logLevel).toBe(level.toLowerCase());
  });

  it("refuses an unknown level, naming the variable", () => {
    expect(() => readConfig({ PROMPTGATE_LOG: "loud" })).toThrow(/^PROMPTGATE_LOG="loud" must be one of trace, /);
  });
});
