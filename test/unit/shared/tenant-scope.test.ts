import { createHash } from "node:crypto";
import {
  MAX_IDENTIFIER_LENGTH,
  assertIdentifier,
  assertPathIdentifier,
  assertTenantId,
} from "../../../src/shared/identifiers";
import { scopeThreadId } from "../../../src/shared/tenant-scope";
import { identifierString, seededRandom } from "./random";

const DIGEST_FORM = /^#[A-Za-z0-9_-]{43}$/;

/** A string of exactly `units` UTF-16 code units built from `unit` (one or two units long) and padding. */
function ofLength(units: number, unit = "a"): string {
  const whole = unit.repeat(Math.floor(units / unit.length));
  return whole + "b".repeat(units - whole.length);
}

describe("scopeThreadId", () => {
  it("keeps `<tenant>#<thread>` while it fits an identifier", () => {
    expect(scopeThreadId("acme", "thread-1")).toBe("acme#thread-1");
    // A thread id may itself hold `#`: the tenant (which cannot) still ends at the first one.
    expect(scopeThreadId("acme", "a#b")).toBe("acme#a#b");
  });

  it("keeps the plain form at exactly 256 code units and digests from 257 on", () => {
    const tenant = "tenant";
    const fits = ofLength(MAX_IDENTIFIER_LENGTH - tenant.length - 1);
    expect(scopeThreadId(tenant, fits)).toBe(`${tenant}#${fits}`);
    expect(scopeThreadId(tenant, fits)).toHaveLength(256);

    const over = `${fits}c`;
    const digest = createHash("sha256").update(`${tenant}#${over}`, "utf8").digest("base64url");
    expect(scopeThreadId(tenant, over)).toBe(`#${digest}`);
  });

  it("counts the plain form's length in UTF-16 code units, as identifiers do", () => {
    // 64 emoji are 128 code units: with `#` and 127 more units the plain form is exactly 256 units.
    const tenant = "😀".repeat(64);
    expect(scopeThreadId(tenant, ofLength(127))).toBe(`${tenant}#${ofLength(127)}`);
    expect(scopeThreadId(tenant, ofLength(128))).toMatch(DIGEST_FORM);
  });

  it("is deterministic", () => {
    const thread = "x".repeat(300);
    expect(scopeThreadId("acme", thread)).toBe(scopeThreadId("acme", thread));
  });

  it("yields an id every saver accepts for the longest tenant and thread ids the HTTP API accepts", () => {
    const longest = [
      ["t".repeat(256), "x".repeat(256)],
      ["😀".repeat(128), "😀".repeat(128)],
      ["日".repeat(256), "$".repeat(256)],
      ["a", "x".repeat(256)],
      ["t".repeat(256), "x"],
    ] as const;
    for (const [tenant, thread] of longest) {
      assertTenantId(tenant);
      assertPathIdentifier("thread_id", thread);
      const scoped = scopeThreadId(tenant, thread);
      expect(scoped).toMatch(DIGEST_FORM);
      expect(scoped.length).toBeLessThanOrEqual(MAX_IDENTIFIER_LENGTH);
      expect(assertIdentifier("thread_id", scoped)).toBe(scoped);
    }
  });

  it("never starts a plain id with `#`, so the plain and digest forms cannot meet", () => {
    const random = seededRandom(7);
    for (let iteration = 0; iteration < 500; iteration += 1) {
      const tenant = identifierString(random, 4).replaceAll("#", "");
      if (tenant === "") continue;
      const scoped = scopeThreadId(tenant, identifierString(random, 12));
      expect(scoped.startsWith("#")).toBe(false);
    }
  });

  it("gives different accepted (tenant, thread) pairs different ids, across both forms", () => {
    const random = seededRandom(2024);
    const pairs = new Set<string>();
    const owners = new Map<string, string>();
    const collisions: string[] = [];
    const consider = (tenant: string, thread: string): void => {
      assertTenantId(tenant);
      assertPathIdentifier("thread_id", thread);
      const pair = JSON.stringify([tenant, thread]);
      if (pairs.has(pair)) return;
      pairs.add(pair);
      const scoped = scopeThreadId(tenant, thread);
      expect(scoped.length).toBeLessThanOrEqual(MAX_IDENTIFIER_LENGTH);
      const owner = owners.get(scoped);
      if (owner !== undefined) collisions.push(`${owner} and ${pair}`);
      owners.set(scoped, pair);
    };

    // Pairs whose concatenations look alike: a `#` moved between tenant and thread is not expressible, but
    // the same characters split differently are.
    for (const [tenant, thread] of [
      ["ab", "c"],
      ["a", "bc"],
      ["a", "b#c"],
      ["a", "#bc"],
      ["a", "b"],
      ["a", "#b"],
    ] as const) {
      consider(tenant, thread);
    }
    // Pairs on both sides of the 256-unit boundary, for tenants of several lengths.
    for (const tenantLength of [1, 2, 100, 254, 255, 256]) {
      const tenant = ofLength(tenantLength, "t");
      for (let threadLength = 1; threadLength <= 256; threadLength += 1) {
        if (Math.abs(tenantLength + 1 + threadLength - 256) <= 3 || threadLength % 17 === 0) {
          consider(tenant, ofLength(threadLength, "x"));
          consider(tenant, `#${ofLength(threadLength - 1, "x")}`);
        }
      }
    }
    // Random short and long pairs.
    for (let iteration = 0; iteration < 1_000; iteration += 1) {
      const tenant = identifierString(random, random.chance(0.5) ? 3 : 120).replaceAll("#", "t");
      let thread = identifierString(random, random.chance(0.5) ? 3 : 120);
      if (thread === "." || thread === "..") thread = "dot";
      if (tenant.length > 256 || thread.length > 256) continue;
      consider(tenant, thread);
    }

    expect(collisions).toEqual([]);
    expect(new Set(owners.keys()).size).toBe(pairs.size);
  });
});
