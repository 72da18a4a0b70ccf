import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MEMORY_TABLE_VERSION } from "../../../src/shared/version";

describe("MEMORY_TABLE_VERSION", () => {
  it("is package.json's version (what /info reports is what is installed)", () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, "../../../package.json"), "utf8")) as {
      version: string;
    };
    expect(MEMORY_TABLE_VERSION).toBe(manifest.version);
  });
});
