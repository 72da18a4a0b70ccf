import { plainCopy } from "../../../src/shared/plain-copy";

describe("plainCopy", () => {
  const record = () => ({
    runId: "run-1",
    legs: 0,
    done: false,
    missing: undefined,
    nothing: null,
    kwargs: { input: { messages: [{ role: "user", content: "hi" }, [1, [2, 3]]] }, config: {} },
    metadata: { tags: ["a", "b"], nested: { deep: { deeper: "x" } } },
  });

  it("gives what structuredClone gives for plain data, undefined members included", () => {
    const original = record();
    const copy = plainCopy(original);
    expect(copy).toStrictEqual(structuredClone(original));
    expect(Object.keys(copy)).toEqual(Object.keys(original));
    expect("missing" in copy).toBe(true);
  });

  it("shares no object or array with the original", () => {
    const original = record();
    const copy = plainCopy(original);
    copy.kwargs.input.messages.push({ role: "ai", content: "changed" });
    (copy.metadata.nested.deep as Record<string, unknown>).deeper = "changed";
    copy.metadata.tags[0] = "changed";
    expect(original).toStrictEqual(record());
  });

  it("copies a value that is not plain data through structuredClone", () => {
    const when = new Date(1_700_000_000_000);
    const bytes = new Uint8Array([1, 2, 3]);
    const copy = plainCopy({ when, bytes, list: [when] });
    // Checked by tag: structuredClone answers with the host realm's Date, not the test sandbox's.
    expect(Object.prototype.toString.call(copy.when)).toBe("[object Date]");
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(when.getTime());
    expect([...copy.bytes]).toEqual([1, 2, 3]);
    expect(copy.bytes).not.toBe(bytes);
    expect(copy.list[0]).not.toBe(when);
  });

  it("returns primitives as they are", () => {
    for (const value of ["text", 0, 1.5, true, null, undefined])
      expect(plainCopy(value)).toBe(value);
  });

  it("copies an object without a prototype", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 } });
    const copy = plainCopy(bare);
    expect(copy).toEqual({ a: { b: 1 } });
    expect(copy.a).not.toBe(bare.a);
  });
});
