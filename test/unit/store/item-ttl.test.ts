import { StoreTtlPolicy } from "../../../src/store/item-ttl";

describe("StoreTtlPolicy", () => {
  const at = Date.UTC(2026, 0, 1, 12, 0, 0, 250);

  it("sets an expiry exactly the TTL after a write, rounded up to a whole second", () => {
    const policy = new StoreTtlPolicy({ defaultTtl: 30 });
    expect(policy.expiryOnWrite(at, undefined)).toEqual({
      expiresAt: Math.ceil((at + 30 * 60_000) / 1000),
      ttlMinutes: 30,
    });
    expect(policy.expiryOnWrite(at, 0.25)).toEqual({
      expiresAt: Math.ceil((at + 15_000) / 1000),
      ttlMinutes: 0.25,
    });
    expect(policy.expiryOnWrite(at, null)).toBeUndefined();
    expect(new StoreTtlPolicy(undefined).expiryOnWrite(at, undefined)).toBeUndefined();
  });

  it("refreshes on read by default, unless the store or the read says otherwise", () => {
    expect(new StoreTtlPolicy(undefined).refreshes(undefined)).toBe(true);
    expect(new StoreTtlPolicy({ refreshOnRead: false }).refreshes(undefined)).toBe(false);
    expect(new StoreTtlPolicy({ refreshOnRead: false }).refreshes(true)).toBe(true);
    expect(new StoreTtlPolicy(undefined).refreshes(false)).toBe(false);
  });

  it("renews with headroom (a tenth of the TTL, at most an hour), only when the item would expire sooner", () => {
    const policy = new StoreTtlPolicy(undefined);
    const written = policy.expiryOnWrite(at, 100)!;
    expect(policy.renewal(written, at)).toBeUndefined();
    const later = at + 60_000;
    const renewed = policy.renewal(written, later)!;
    expect(renewed).toBe(Math.ceil((later + 100 * 60_000) / 1000) + 10 * 60);
    expect(
      policy.renewal({ expiresAt: renewed, ttlMinutes: 100 }, later + 9 * 60_000),
    ).toBeUndefined();
    const day = policy.expiryOnWrite(at, 24 * 60)!;
    expect(policy.renewal(day, at + 1000)).toBe(Math.ceil((at + 1000 + 86_400_000) / 1000) + 3600);
    expect(policy.renewal(undefined, at)).toBeUndefined();
  });
});
