import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export interface BenchContext {
  /** DynamoDB Local endpoint shared by every section of the run. */
  endpoint: string;
}

export type BenchSection = (context: BenchContext) => Promise<void>;

export function writeResults(name: string, results: unknown): string {
  const directory = join(__dirname, "results");
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

/** Median of a list of numbers (the list is not modified). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
