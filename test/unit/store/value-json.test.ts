import { InvalidStoreOperationError, StoreValueTooLargeError } from "../../../src/shared/errors";
import { parseStoreValue, serializeStoreValue } from "../../../src/store/value-json";

describe("store values as JSON", () => {
  const roundTrip = (value: unknown) =>
    parseStoreValue(serializeStoreValue(value, 1024 * 1024).json);

  it("accepts 64 levels of nesting and refuses a 65th", () => {
    let value: Record<string, unknown> = { leaf: 1 };
    for (let depth = 1; depth < 64; depth += 1) value = { child: value };
    expect(() => serializeStoreValue(value, 1024 * 1024)).not.toThrow();
    expect(() => serializeStoreValue({ child: value }, 1024 * 1024)).toThrow(
      "expected at most 64 levels of nesting",
    );
  });

  it("stores what JSON.stringify writes: toJSON results, class fields, null for undefined elements", () => {
    class Preference {
      constructor(readonly drink: string) {}
    }
    const message = { toJSON: () => ({ type: "human", content: "hi" }) };
    expect(roundTrip({ message, preference: new Preference("tea"), list: [undefined, 1] })).toEqual(
      {
        message: { type: "human", content: "hi" },
        preference: { drink: "tea" },
        list: [null, 1],
      },
    );
  });

  it("checks what toJSON returns, and refuses sets and typed arrays", () => {
    expect(() => roundTrip({ bad: { toJSON: () => Number.NaN } })).toThrow(
      "expected finite numbers",
    );
    expect(() => roundTrip({ tags: new Set(["a"]) })).toThrow(InvalidStoreOperationError);
    expect(() => roundTrip({ floats: new Float32Array(2) })).toThrow("got a Float32Array");
    expect(() => roundTrip(new Date())).toThrow("Invalid value: expected an object");
  });

  it("measures UTF-8 bytes of the JSON text", () => {
    expect(serializeStoreValue({ s: "é" }, 100).bytes).toBe('{"s":"é"}'.length + 1);
    expect(() => serializeStoreValue({ s: "é".repeat(50) }, 100)).toThrow(StoreValueTooLargeError);
  });
});
