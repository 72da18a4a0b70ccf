import { build } from "vite";
import config from "./vite.config.mjs";

// Builds the page with Vite's JS API into the folder given as the only argument. The browser test runs it in a
// child process: Vite is an ES module only, which Jest's CommonJS module system cannot load.
const outDir = process.argv[2];
if (!outDir) throw new Error("Invalid outDir: expected a folder as the first argument, got none");
await build({ ...config, configFile: false, build: { ...config.build, outDir } });
