/**
 * `npm run bench`: every benchmark section, in one run, against real parts (DynamoDB Local, the real savers).
 * Each section prints its table and writes `bench/results/<section>.json`.
 */
import { startDynamoDBLocal } from "../test/support/dynamodb-local";
import type { BenchContext, BenchSection } from "./context";
import devServer from "./dev-server";
import dynamodb from "./dynamodb";
import handler from "./handler";
import image from "./image";
import memory from "./memory";
import runs from "./runs";
import store from "./store";
import stream from "./stream";
import synth from "./synth";

// One line per section; `npm run bench -- <name>` runs only the named ones.
const SECTIONS: Array<{ name: string; run: BenchSection }> = [
  { name: "dynamodb", run: dynamodb },
  { name: "memory", run: memory },
  { name: "store", run: store },
  { name: "handler", run: handler },
  { name: "dev-server", run: devServer },
  { name: "runs", run: runs },
  { name: "stream", run: stream },
  { name: "image", run: image },
  { name: "synth", run: synth },
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const local = await startDynamoDBLocal();
  const context: BenchContext = { endpoint: local.endpoint };
  let failed = false;
  try {
    for (const section of SECTIONS) {
      if (only.length > 0 && !only.includes(section.name)) continue;
      console.log(`\n## ${section.name}\n`);
      try {
        await section.run(context);
      } catch (error) {
        failed = true;
        console.error(`section ${section.name} failed:`, error);
      }
    }
  } finally {
    local.stop();
  }
  if (failed) process.exitCode = 1;
}

void main();
