/**
 * Layers import one way: shared -> table -> (checkpoint, store) -> runtime -> (dev server, image, Terraform
 * module, scripts, bench), with the example graphs beside the runtime. The checkpoint savers and the long-term
 * memory store are peers: neither imports the other. Each rule names what may not be imported;
 * `npm run lint` and test/lint/layers.test.ts run them.
 */
const LOWER_LAYERS_OF = {
  shared: [],
  table: ["shared"],
  checkpoint: ["shared", "table"],
  store: ["shared", "table"],
  runtime: ["shared", "table", "checkpoint", "store"],
};

/** What sits above the library: applications of it, never imported by it. */
const ABOVE_THE_LIBRARY = "^(src/dev|src/examples|image|modules|scripts|bench|test)/";

module.exports = {
  forbidden: [
    ...Object.entries(LOWER_LAYERS_OF).map(([layer, lower]) => ({
      name: `${layer}-imports-only-${lower.length ? lower.join("-") : "itself"}`,
      comment: `src/${layer} may import ${[...lower, layer].map((l) => `src/${l}`).join(", ")} and packages, nothing above.`,
      severity: "error",
      from: { path: `^src/${layer}/` },
      to: { path: "^src/", pathNot: `^src/(${[...lower, layer].join("|")})/` },
    })),
    {
      name: "library-imports-no-application",
      comment:
        "The library (src/shared, table, checkpoint, runtime) never imports what is built on it.",
      severity: "error",
      from: { path: "^src/(shared|table|checkpoint|store|runtime)/" },
      to: { path: ABOVE_THE_LIBRARY },
    },
    // Inside the runtime, rooms import one way: http (faces, routes) -> runs (the rulebook-driven machinery)
    // -> graphs (registry, legs, streaming). The files at src/runtime/ itself compose them (assembly, handler,
    // worker, function URL, index) or serve all of them (config, environment, observability, types).
    {
      name: "runtime-graphs-import-no-runs-or-http",
      comment: "Graphs (registry, legs, streaming) know nothing of runs or HTTP.",
      severity: "error",
      from: { path: "^src/runtime/graphs/" },
      to: { path: "^src/runtime/(runs|http)/" },
    },
    {
      name: "runtime-runs-import-no-http",
      comment:
        "The run machinery throws domain errors; only HTTP faces know of requests and statuses.",
      severity: "error",
      from: { path: "^src/runtime/runs/" },
      to: { path: "^src/runtime/http/" },
    },
    {
      name: "runtime-rooms-import-no-composition",
      comment: "Rooms never import what composes them.",
      severity: "error",
      from: { path: "^src/runtime/(http|runs|graphs)/" },
      to: { path: "^src/runtime/(assembly|handler|worker|function-url|index|table-backing)\\.ts$" },
    },
    {
      name: "runtime-uses-saver-entry-points",
      comment:
        "The runtime reaches a saver only through its package entry (index.ts), never its internals.",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: {
        path: "^src/checkpoint/(dynamodb|memory)/",
        pathNot: "^src/checkpoint/(dynamodb|memory)/index\\.ts$",
      },
    },
    {
      name: "savers-are-independent",
      comment: "The DynamoDB and the in-memory saver share nothing but what lies below them.",
      severity: "error",
      from: { path: "^src/checkpoint/(dynamodb|memory)/" },
      to: { path: "^src/checkpoint/(dynamodb|memory)/", pathNot: "^src/checkpoint/$1/" },
    },
    {
      name: "applications-are-independent",
      comment: "The image, the Terraform module and the dev server do not import one another.",
      severity: "error",
      from: { path: "^(image|modules|src/dev)/" },
      to: { path: "^(image|modules|src/dev)/", pathNot: "^$1/" },
    },
    {
      name: "examples-are-plain-graphs",
      comment:
        "The example graphs use LangGraph and the savers' types only, so any application can run them.",
      severity: "error",
      from: { path: "^src/examples/" },
      to: { path: "^(src/(runtime|dev)|image|modules|scripts|bench|test)/" },
    },
    {
      name: "no-circular",
      comment: "Import cycles hide which module owns a concept.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|cdktf\\.out|\\.terraform)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["cjs", "es6"],
  },
};
