import { readFileSync } from "node:fs";
import { API_REPORT_PATH, renderApiReport } from "../../../scripts/api-report";

// The public surface is reviewed: every name each package entry exports is listed in api-report.md, and a change
// to the entries must come with the regenerated report.
describe("api-report.md", () => {
  it("lists what the package entries export", () => {
    const committed = readFileSync(API_REPORT_PATH, "utf8");
    const current = renderApiReport();
    if (current !== committed) {
      throw new Error("the public API changed: run `npm run api-report` and review api-report.md");
    }
    // The report saw the entries: a broken generator would pass vacuously.
    expect(current).toContain("- `createHandler`: function");
  });
});
