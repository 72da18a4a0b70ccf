import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildUnbundled } from "../../bench/image";
import { buildImage, REPO_ROOT } from "../../scripts/build-image";
import { imageNodeBinary, missingImageNode } from "./ric-process";

/**
 * The image bench's unbundled baseline (bench/image.ts) must load on the image's Node: it once stopped at init with
 * ERR_IMPORT_ATTRIBUTE_MISSING, a JSON file of a package imported without `type: "json"`, so `npm run bench`
 * exited 1 in its image section.
 */
const node = imageNodeBinary();
const describeWithNode = node === undefined ? describe.skip : describe;
if (node === undefined) console.log(`SKIP: image bench baseline: ${missingImageNode()}`);

describeWithNode("image bench: the unbundled baseline", () => {
  const outDir = join(REPO_ROOT, "dist", "image-unbundled-test");
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("loads its handler module on the image's Node (packages from node_modules, their JSON inlined)", async () => {
    const bundled = await buildImage();
    await buildUnbundled(bundled.outDir, outDir);
    const output = execFileSync(
      node!,
      [
        "--input-type=module",
        "-e",
        'const m = await import("./index.mjs"); console.log(JSON.stringify(Object.keys(m)));',
      ],
      {
        cwd: outDir,
        encoding: "utf8",
        env: { ...process.env, TABLE_NAME: "memory-table", LOG_LEVEL: "silent" },
      },
    );
    expect(JSON.parse(output.trim().split("\n").at(-1)!)).toEqual(["handler"]);
  }, 120_000);
});
