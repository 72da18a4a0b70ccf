import { build } from "vite";
import config from "./vite.config.mjs";

// Builds the page with Vite's JS API into the folder given as the first argument. The browser test runs it in a
// child process: Vite is an ES module only, which Jest's CommonJS module system cannot load. A second argument
// names the package the page's `@langchain/langgraph-sdk` imports resolve to (another major's npm alias, such as
// `@langchain/langgraph-sdk-v2`); without it, the SDK itself.
const [outDir, sdkPackage] = process.argv.slice(2);
if (!outDir) throw new Error("Invalid outDir: expected a folder as the first argument, got none");
if (sdkPackage !== undefined && !/^@langchain\/langgraph-sdk(-v\d+)?$/.test(sdkPackage)) {
  throw new Error(`Invalid SDK package: expected @langchain/langgraph-sdk[-vN], got ${sdkPackage}`);
}
await build({
  ...config,
  configFile: false,
  ...(sdkPackage
    ? {
        resolve: {
          alias: [{ find: /^@langchain\/langgraph-sdk(?=\/|$)/, replacement: sdkPackage }],
        },
      }
    : {}),
  build: { ...config.build, outDir },
});
