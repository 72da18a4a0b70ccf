import { defineConfig } from "vite";

/**
 * The support chat page. Vite transforms the TSX itself (its built-in Oxc transform, React's automatic JSX
 * runtime), so no React plugin is needed; the page has no hot reload, which a test does not use.
 */
export default defineConfig({
  root: import.meta.dirname,
  // Served under /app/ so that every other path of the origin can go to the API.
  base: "/app/",
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  build: {
    emptyOutDir: true,
    reportCompressedSize: false,
    // One bundle of React and the SDK (about 700 kB), loaded over loopback: size does not matter here.
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      onwarn(warning, warn) {
        // The SDK's React entry is marked "use client" for React Server Components; a client bundle has no use
        // for the directive, so dropping it changes nothing.
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
  logLevel: "warn",
});
