import { DEFAULT_TTL_SECONDS } from "../../../src/shared/defaults";
import { InvalidConfigurationError } from "../../../src/shared/errors";
import { THREAD_ATTRIBUTES } from "../../../src/table/definition";
import { ExpiryPolicy, isExpired, notExpired } from "../../../src/table/expiry";
import { seededRandom, type Random } from "../shared/random";

const HOUR = 3600;
const EPOCH_MS = 1_750_000_000_000;

/**
 * The expiry a thread record holds after each write of `writes` (epoch ms, ascending), when every write renews
 * exactly when the policy says it needs to; the first write creates the record with a renewed expiry.
 */
function expiriesAfter(policy: ExpiryPolicy, writes: readonly number[]): number[] {
  const expiries: number[] = [];
  let expiry: number | undefined;
  for (const now of writes) {
    if (expiry === undefined || policy.needsRenewal(expiry, now)) {
      expiry = policy.renewedExpiry(now);
    }
    expiries.push(expiry);
  }
  return expiries;
}

/** Ascending write times whose gaps hit the edges that matter: same ms, second boundaries, TTL, headroom. */
function writeTimes(random: Random, policy: ExpiryPolicy, count: number): number[] {
  const ttlMs = policy.ttlSeconds * 1000;
  const headroomMs = policy.headroomSeconds * 1000;
  const near = (target: number) => Math.max(0, target + random.int(-1500, 1500));
  let now = EPOCH_MS + (random.chance(0.3) ? 0 : random.int(0, 999));
  const times = [now];
  while (times.length < count) {
    const gap = random.pick([
      () => 0,
      () => random.int(1, 999),
      () => 1000 * random.int(1, 5),
      () => near(headroomMs),
      () => near(ttlMs),
      () => near(ttlMs + headroomMs),
      () => near(ttlMs - headroomMs),
      () => random.int(0, 2 * ttlMs),
      () => random.int(0, Math.max(1, headroomMs)),
    ])();
    now += gap;
    times.push(now);
  }
  return times;
}

const TTLS = [1, 2, 9, 10, 11, 59, 600, HOUR, 35_999, 36_000, 36_001, 86_400, DEFAULT_TTL_SECONDS];

describe("ExpiryPolicy configuration", () => {
  it("defaults to the library's TTL with an hour of headroom", () => {
    const policy = new ExpiryPolicy();
    expect(policy.ttlSeconds).toBe(DEFAULT_TTL_SECONDS);
    expect(policy.headroomSeconds).toBe(HOUR);
  });

  it.each([
    [1, 0],
    [9, 0],
    [10, 1],
    [19, 1],
    [600, 60],
    [35_999, 3599],
    [36_000, 3600],
    [36_001, 3600],
    [DEFAULT_TTL_SECONDS, 3600],
  ])("gives a TTL of %i s a headroom of %i s (a tenth, at most an hour)", (ttl, headroom) => {
    expect(new ExpiryPolicy(ttl).headroomSeconds).toBe(headroom);
    expect(headroom).toBe(Math.min(HOUR, Math.floor(ttl / 10)));
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "60" as unknown as number])(
    "refuses a TTL of %p",
    (ttl) => {
      expect(() => new ExpiryPolicy(ttl)).toThrow(InvalidConfigurationError);
      expect(() => new ExpiryPolicy(ttl)).toThrow(/ttlSeconds/);
    },
  );
});

describe("renewal", () => {
  it("writes an expiry of the next whole second plus TTL and headroom", () => {
    const policy = new ExpiryPolicy(600);
    expect(policy.renewedExpiry(EPOCH_MS)).toBe(EPOCH_MS / 1000 + 600 + 60);
    expect(policy.renewedExpiry(EPOCH_MS + 1)).toBe(EPOCH_MS / 1000 + 1 + 600 + 60);
    expect(policy.renewedExpiry(EPOCH_MS + 999)).toBe(EPOCH_MS / 1000 + 1 + 600 + 60);
  });

  it("renews only when a write would leave less than the TTL to live", () => {
    const policy = new ExpiryPolicy(600);
    const expiry = EPOCH_MS / 1000 + 600;
    // Exactly the TTL left: no renewal needed; one millisecond less: renewal.
    expect(policy.needsRenewal(expiry, EPOCH_MS)).toBe(false);
    expect(policy.needsRenewal(expiry, EPOCH_MS - 1)).toBe(false);
    expect(policy.needsRenewal(expiry, EPOCH_MS + 1)).toBe(true);
  });

  it("is never needed again right after a renewal", () => {
    for (const ttl of TTLS) {
      const policy = new ExpiryPolicy(ttl);
      for (const now of [EPOCH_MS, EPOCH_MS + 1, EPOCH_MS + 999]) {
        expect(policy.needsRenewal(policy.renewedExpiry(now), now)).toBe(false);
      }
    }
  });
});

describe("isExpired", () => {
  it("expires a record at its expiry second and never a record without one", () => {
    const expiry = EPOCH_MS / 1000;
    expect(isExpired(expiry, EPOCH_MS - 1)).toBe(false);
    expect(isExpired(expiry, EPOCH_MS)).toBe(true);
    expect(isExpired(expiry, EPOCH_MS + 1)).toBe(true);
    expect(isExpired(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe("the expiry promise", () => {
  it("never expires a thread before its last write plus the TTL, and always by then plus headroom and a second", () => {
    const random = seededRandom(0xe4e1);
    const broken: unknown[] = [];
    for (let sequence = 0; sequence < 400; sequence += 1) {
      const policy = new ExpiryPolicy(random.pick(TTLS));
      const ttlMs = policy.ttlSeconds * 1000;
      const latest = (policy.ttlSeconds + policy.headroomSeconds) * 1000 + 1000;
      const writes = writeTimes(random, policy, random.int(1, 60));
      const expiries = expiriesAfter(policy, writes);
      for (let index = 0; index < writes.length; index += 1) {
        const lastWrite = writes[index]!;
        const expiry = expiries[index]!;
        const nextWrite = writes[index + 1];
        // Until the next write (which still sees this expiry), `lastWrite` is the last write.
        const probes = [lastWrite, lastWrite + 1, lastWrite + ttlMs - 1000, lastWrite + ttlMs - 1];
        if (nextWrite !== undefined) probes.push(nextWrite - 1, nextWrite);
        for (const moment of probes) {
          const until = nextWrite ?? Number.POSITIVE_INFINITY;
          if (moment < lastWrite || moment > until || moment >= lastWrite + ttlMs) continue;
          if (isExpired(expiry, moment)) {
            broken.push({ ttl: policy.ttlSeconds, writes, index, moment, expiry, rule: "early" });
          }
        }
        // Were this the last write, the thread would be gone by then.
        if (!isExpired(expiry, lastWrite + latest)) {
          broken.push({ ttl: policy.ttlSeconds, writes, index, expiry, rule: "late" });
        }
        if (index > 0 && expiry < expiries[index - 1]!) {
          broken.push({ ttl: policy.ttlSeconds, writes, index, expiry, rule: "shortened" });
        }
      }
    }
    expect(broken.slice(0, 3)).toEqual([]);
  });

  it("renews at most once per headroom, so most writes need no renewal write", () => {
    const random = seededRandom(0x4e11);
    for (let sequence = 0; sequence < 200; sequence += 1) {
      const policy = new ExpiryPolicy(random.pick(TTLS.filter((ttl) => ttl >= 10)));
      const writes = writeTimes(random, policy, random.int(2, 60));
      let renewedAt: number | undefined;
      let expiry: number | undefined;
      for (const now of writes) {
        if (expiry === undefined || policy.needsRenewal(expiry, now)) {
          if (renewedAt !== undefined) {
            expect(now - renewedAt).toBeGreaterThan(policy.headroomSeconds * 1000);
          }
          renewedAt = now;
          expiry = policy.renewedExpiry(now);
        }
      }
    }
  });

  it("renews a thread written every second for a day a few times only, with the default TTL", () => {
    const policy = new ExpiryPolicy();
    const writes = Array.from({ length: 24 * HOUR }, (_, second) => EPOCH_MS + 250 + second * 1000);
    const expiries = expiriesAfter(policy, writes);
    const renewals = expiries.filter(
      (expiry, index) => index === 0 || expiry !== expiries[index - 1],
    );
    // One renewal each time the hour of headroom runs out: about 24, plus the creation.
    expect(renewals.length).toBeLessThanOrEqual(25);
    expect(renewals.length).toBeGreaterThanOrEqual(24);
  });
});

describe("notExpired", () => {
  /** What DynamoDB decides for the condition on a record holding `expiry` (undefined: no ttl attribute). */
  const holds = (condition: ReturnType<typeof notExpired>, expiry: number | undefined): boolean =>
    expiry === undefined || expiry > (condition.values[":now_seconds"] as number);

  it("is the documented condition on the TTL attribute", () => {
    const condition = notExpired(EPOCH_MS + 1234);
    expect(condition).toEqual({
      text: "attribute_not_exists(#ttl) OR #ttl > :now_seconds",
      names: { "#ttl": THREAD_ATTRIBUTES.ttl },
      values: { ":now_seconds": EPOCH_MS / 1000 + 1 },
    });
  });

  it("agrees with isExpired at and around every second boundary", () => {
    const disagreements: unknown[] = [];
    const base = EPOCH_MS / 1000;
    for (let expiry = base - 3; expiry <= base + 3; expiry += 1) {
      for (let offset = -3001; offset <= 3001; offset += 1) {
        const now = EPOCH_MS + offset;
        if (holds(notExpired(now), expiry) !== !isExpired(expiry, now)) {
          disagreements.push({ expiry, now });
        }
      }
    }
    expect(disagreements.slice(0, 3)).toEqual([]);
  });

  it("always holds for a record without an expiry, as isExpired never expires one", () => {
    for (const now of [0, EPOCH_MS, EPOCH_MS + 999]) {
      expect(holds(notExpired(now), undefined)).toBe(true);
      expect(isExpired(undefined, now)).toBe(false);
    }
  });

  it("agrees with isExpired for renewed expiries at random moments", () => {
    const random = seededRandom(99);
    for (let iteration = 0; iteration < 2_000; iteration += 1) {
      const policy = new ExpiryPolicy(random.pick(TTLS));
      const expiry = policy.renewedExpiry(EPOCH_MS + random.int(0, 10_000));
      const now = expiry * 1000 + random.int(-2500, 2500);
      expect(holds(notExpired(now), expiry)).toBe(!isExpired(expiry, now));
    }
  });
});
