import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One scratch output directory per test file (synth-level tests never write to it), removed afterwards:
 * `Testing.app()` alone would leave a fresh temporary directory behind for every app.
 */
export function useScratchOutdir(): () => string {
  let outdir: string | undefined;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), "memory-table-synth-"));
  });
  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });
  return () => outdir!;
}
