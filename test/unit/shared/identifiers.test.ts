import { InvalidIdentifierError } from "../../../src/shared/errors";
import {
  MAX_IDENTIFIER_LENGTH,
  assertIdentifier,
  assertPathIdentifier,
  assertTenantId,
} from "../../../src/shared/identifiers";

/** The error `action` throws (failing the test when it throws nothing). */
function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, none was thrown");
}

describe("assertIdentifier", () => {
  it("returns an accepted value unchanged", () => {
    for (const value of [
      "a",
      "thread-1",
      "node:6f1e|sub:9",
      "日本語",
      "😀",
      "a b",
      "#",
      "$",
      "%",
    ]) {
      expect(assertIdentifier("thread_id", value)).toBe(value);
    }
  });

  it.each<[string, unknown, string]>([
    ["a number", 42, "a number"],
    ["null", null, "null"],
    ["undefined", undefined, "a undefined"],
    ["an array", ["a"], "an array"],
    ["an object", { id: "a" }, "a object"],
    ["a boolean", true, "a boolean"],
  ])("refuses %s, naming its type", (_label, value, described) => {
    const error = thrown(() => assertIdentifier("thread_id", value));
    expect(error).toBeInstanceOf(InvalidIdentifierError);
    expect(error).toMatchObject({ field: "thread_id" });
    expect((error as Error).message).toContain(`got ${described}`);
  });

  it("refuses the empty string unless empty is allowed (the root namespace)", () => {
    expect(() => assertIdentifier("thread_id", "")).toThrow(InvalidIdentifierError);
    expect(assertIdentifier("checkpoint_ns", "", { allowEmpty: true })).toBe("");
  });

  it("accepts exactly the maximum length and refuses one more, counting UTF-16 code units", () => {
    expect(assertIdentifier("id", "a".repeat(MAX_IDENTIFIER_LENGTH))).toHaveLength(256);
    expect(() => assertIdentifier("id", "a".repeat(MAX_IDENTIFIER_LENGTH + 1))).toThrow(
      /at most 256 characters, got 257/,
    );
    // An astral character is two code units, as JavaScript counts (and as the HTTP API's limit does).
    expect(assertIdentifier("id", "😀".repeat(128))).toHaveLength(256);
    expect(() => assertIdentifier("id", `${"😀".repeat(128)}a`)).toThrow(InvalidIdentifierError);
  });

  it("applies a custom maximum length", () => {
    expect(assertIdentifier("ns", "a".repeat(1024), { maxLength: 1024 })).toHaveLength(1024);
    expect(() => assertIdentifier("ns", "a".repeat(1025), { maxLength: 1024 })).toThrow(
      InvalidIdentifierError,
    );
    expect(() => assertIdentifier("id", "abc", { maxLength: 2 })).toThrow(InvalidIdentifierError);
  });

  it("refuses every C0 and C1 control character and DEL, anywhere in the value", () => {
    const controls = [
      ...Array.from({ length: 0x20 }, (_, code) => code),
      ...Array.from({ length: 0x21 }, (_, offset) => 0x7f + offset),
    ];
    for (const code of controls) {
      const character = String.fromCharCode(code);
      for (const value of [character, `a${character}`, `${character}a`, `a${character}b`]) {
        expect(() => assertIdentifier("id", value)).toThrow(/control characters/);
      }
    }
  });

  it("accepts the printable neighbours of the control ranges", () => {
    for (const value of [" ", "~", "\u00a0", "\u00ff"]) {
      expect(assertIdentifier("id", value)).toBe(value);
    }
  });

  it("refuses a lone high or low surrogate wherever it stands, and accepts well-formed pairs", () => {
    const lone = [
      "\ud800",
      "\udfff",
      "a\ud83d",
      "\ude00a",
      "\ude00\ud83d", // a low before a high is two lone surrogates, not a pair
      "\ud83d\ud83d\ude00", // the first high has no low of its own
      "\ud83d\ude00\ude00", // the second low has no high of its own
      "😀\ud83d",
    ];
    for (const value of lone) {
      expect(() => assertIdentifier("id", value)).toThrow(/lone surrogate/);
    }
    for (const value of ["\ud83d\ude00", "\u{10000}", "\u{10ffff}", "a😀b😀"]) {
      expect(assertIdentifier("id", value)).toBe(value);
    }
  });

  it("refuses forbidden characters, including astral ones", () => {
    expect(() => assertIdentifier("id", "a#b", { forbidden: "#" })).toThrow(/no "#" character/);
    expect(() => assertIdentifier("id", "a😀", { forbidden: "x😀" })).toThrow(/no "😀" character/);
    expect(assertIdentifier("id", "a$b", { forbidden: "#" })).toBe("a$b");
  });

  it("never echoes the refused value in the error (ids may be private)", () => {
    const secret = "secret-value";
    const cases: Array<[unknown, Parameters<typeof assertIdentifier>[2]]> = [
      [`${secret}${"x".repeat(300)}`, {}],
      [`${secret}\u0007`, {}],
      [`${secret}\ud800`, {}],
      [`${secret}#`, { forbidden: "#" }],
    ];
    for (const [value, rules] of cases) {
      const error = thrown(() => assertIdentifier("thread_id", value, rules));
      expect(error).toBeInstanceOf(InvalidIdentifierError);
      expect((error as Error).message).not.toContain(secret);
      expect((error as Error).message).toContain("thread_id");
    }
  });
});

describe("assertTenantId", () => {
  it("accepts a plain tenant id and refuses `#`, which separates the tenant from the rest of a key", () => {
    expect(assertTenantId("acme")).toBe("acme");
    expect(assertTenantId("acme$corp")).toBe("acme$corp");
    const error = thrown(() => assertTenantId("acme#corp"));
    expect(error).toBeInstanceOf(InvalidIdentifierError);
    expect(error).toMatchObject({ field: "tenant id" });
  });

  it("refuses an empty, over-long or non-string tenant id", () => {
    expect(() => assertTenantId("")).toThrow(InvalidIdentifierError);
    expect(() => assertTenantId("t".repeat(257))).toThrow(InvalidIdentifierError);
    expect(() => assertTenantId(7)).toThrow(InvalidIdentifierError);
  });
});

describe("assertPathIdentifier", () => {
  it("refuses the dot segments `.` and `..`, which HTTP clients resolve away before sending", () => {
    for (const value of [".", ".."]) {
      const error = thrown(() => assertPathIdentifier("thread_id", value));
      expect(error).toBeInstanceOf(InvalidIdentifierError);
      expect(error).toMatchObject({ field: "thread_id" });
    }
  });

  it("accepts ids that merely contain or resemble dots", () => {
    for (const value of ["...", ".a", "a.", "a..b", ". ", "v1.2"]) {
      expect(assertPathIdentifier("thread_id", value)).toBe(value);
    }
  });

  it("applies every identifier rule as well", () => {
    expect(() => assertPathIdentifier("thread_id", "")).toThrow(InvalidIdentifierError);
    expect(() => assertPathIdentifier("thread_id", "a\nb")).toThrow(InvalidIdentifierError);
    expect(() => assertPathIdentifier("thread_id", "x".repeat(257))).toThrow(
      InvalidIdentifierError,
    );
  });
});
