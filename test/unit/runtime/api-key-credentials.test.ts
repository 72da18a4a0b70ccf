import { apiKeyId, hashApiKey, isApiKey } from "../../../src/runtime/auth/api-key-format";
import { createRequestAuthorizer } from "../../../src/runtime/auth/authorizer";
import { readRuntimeConfig } from "../../../src/runtime/config";
import { presentedCredential } from "../../../src/runtime/credentials";
import { InvalidConfigurationError } from "../../../src/shared/errors";
import { parseArgs, parseLifetime } from "../../../scripts/api-key";

const KEY = `mt_0123456789abcdef_${"A".repeat(43)}`;

describe("API key format", () => {
  it("finds the key id of a well-formed key only", () => {
    expect(apiKeyId(KEY)).toBe("0123456789abcdef");
    for (const bad of [
      "mt_0123456789abcdef",
      `mt_0123456789ABCDEF_${"A".repeat(43)}`,
      `mt_0123456789abcdef_${"A".repeat(42)}`,
      `mt_0123456789abcdef_${"A".repeat(43)}x`,
      `xx_0123456789abcdef_${"A".repeat(43)}`,
    ]) {
      expect({ bad, id: apiKeyId(bad) }).toEqual({ bad, id: undefined });
    }
  });

  it("hashes with SHA-256 (hex) and never keeps the key", () => {
    expect(hashApiKey(KEY)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(KEY)).not.toBe(hashApiKey(`${KEY.slice(0, -1)}B`));
  });

  it("tells an API key from a JWT, from either header, and refuses two that disagree", () => {
    expect(isApiKey(KEY)).toBe(true);
    expect(isApiKey("eyJhbGciOi.x.y")).toBe(false);
    expect(presentedCredential(undefined, KEY)).toEqual({ kind: "api-key", key: KEY });
    expect(presentedCredential(`Bearer ${KEY}`, undefined)).toEqual({ kind: "api-key", key: KEY });
    expect(presentedCredential(undefined, "eyJ.a.b")).toEqual({ kind: "jwt", token: "eyJ.a.b" });
    expect(presentedCredential("Bearer eyJ.a.b", KEY)).toBeUndefined();
    expect(presentedCredential(undefined, "   ")).toBeUndefined();
    expect(presentedCredential(undefined, undefined)).toBeUndefined();
  });
});

describe("request authorizer without a table (pure parts)", () => {
  it("refuses a key when no verifier is configured, and a JWT whose tenant claim is malformed", async () => {
    const authorize = createRequestAuthorizer({
      verifyJwt: async () => ({ "custom:tenant_id": "a#b", sub: "u" }),
      tenantClaim: "custom:tenant_id",
    });
    await expect(authorize({ headers: { "x-api-key": KEY } })).resolves.toEqual({
      isAuthorized: false,
    });
    await expect(authorize({ headers: { Authorization: "Bearer eyJ.a.b" } })).resolves.toEqual({
      isAuthorized: false,
    });
  });
});

describe("API_KEY_CACHE_SECONDS", () => {
  it("defaults to 60 and refuses anything but 0 to 3600 whole seconds", () => {
    expect(readRuntimeConfig({}).apiKeyCacheSeconds).toBe(60);
    expect(readRuntimeConfig({ API_KEY_CACHE_SECONDS: "0" }).apiKeyCacheSeconds).toBe(0);
    for (const bad of ["-1", "3601", "1.5", "soon"]) {
      expect(() => readRuntimeConfig({ API_KEY_CACHE_SECONDS: bad })).toThrow(
        InvalidConfigurationError,
      );
    }
  });
});

describe("the api-key command's arguments", () => {
  it("reads lifetimes in days, hours or minutes", () => {
    expect(parseLifetime("90d")).toBe(90 * 86_400_000);
    expect(parseLifetime("12h")).toBe(12 * 3_600_000);
    expect(parseLifetime("30m")).toBe(30 * 60_000);
    for (const bad of ["0d", "90", "1y", "-1d", ""]) {
      expect(() => parseLifetime(bad)).toThrow(/^Invalid --expires-in/);
    }
  });

  it("refuses unknown commands, options of another command and missing values", () => {
    expect(parseArgs(["list", "--table", "t", "--tenant", "a"])).toEqual({
      command: "list",
      options: { table: "t", tenant: "a" },
      json: false,
    });
    expect(() => parseArgs(["delete"])).toThrow(/^Invalid command/);
    expect(() => parseArgs(["list", "--table", "t", "--tenant", "a", "--key-id", "x"])).toThrow(
      /^Invalid option for list/,
    );
    expect(() => parseArgs(["revoke", "--table", "t", "--tenant", "a"])).toThrow(
      /^Invalid --key-id/,
    );
    expect(() => parseArgs(["create", "--table", "--tenant", "a"])).toThrow(/^Invalid --table/);
  });
});
