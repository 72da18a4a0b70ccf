/**
 * Section "synth": how long `npm run synth` takes (the budget is 10 s), and why provider classes are imported
 * from submodule paths: the time and memory of loading `@cdktf/provider-aws` from its root against one submodule.
 * Each measurement is a fresh process, as a developer or CI runs it.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { median, writeResults } from "./context";

const RUNS = 5;
const REPO = join(__dirname, "..");
const SYNTH_BUDGET_MS = 10_000;

interface Sample {
  ms: number;
  maxRssMb: number;
}

/** Wall time and peak memory of one child process (GNU time reports the peak RSS). */
function measure(command: string, args: string[]): Sample {
  const started = process.hrtime.bigint();
  const result = spawnSync("/usr/bin/time", ["-f", "%M", command, ...args], {
    cwd: REPO,
    encoding: "utf8",
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} failed:\n${result.stderr}`);
  const kb = Number(result.stderr.trim().split("\n").pop());
  return { ms, maxRssMb: Math.round(kb / 1024) };
}

function summarize(samples: Sample[]): {
  medianMs: number;
  minMs: number;
  maxMs: number;
  maxRssMb: number;
} {
  const times = samples.map((sample) => sample.ms);
  return {
    medianMs: Math.round(median(times)),
    minMs: Math.round(Math.min(...times)),
    maxMs: Math.round(Math.max(...times)),
    maxRssMb: Math.max(...samples.map((sample) => sample.maxRssMb)),
  };
}

export default async function synth(): Promise<void> {
  const npm = (): Sample => measure("npm", ["run", "synth", "--silent"]);
  const load = (path: string) => (): Sample =>
    measure(process.execPath, ["-e", `require(${JSON.stringify(path)})`]);
  const cases: Record<string, () => Sample> = {
    "npm run synth": npm,
    "require @cdktf/provider-aws (root)": load("@cdktf/provider-aws"),
    "require @cdktf/provider-aws/lib/dynamodb-table": load(
      "@cdktf/provider-aws/lib/dynamodb-table",
    ),
  };
  const results: Record<string, ReturnType<typeof summarize>> = {};
  for (const [name, run] of Object.entries(cases)) {
    results[name] = summarize(Array.from({ length: RUNS }, run));
  }
  console.table(results);
  const synthMs = results["npm run synth"]!.medianMs;
  console.log(
    `npm run synth: median ${synthMs} ms over ${RUNS} runs (budget ${SYNTH_BUDGET_MS} ms): ${
      synthMs <= SYNTH_BUDGET_MS ? "within budget" : "OVER BUDGET"
    }`,
  );
  writeResults("synth", { runs: RUNS, budgetMs: SYNTH_BUDGET_MS, results });
}
