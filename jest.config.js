/**
 * Two tiers. `unit`: pure code and the in-memory saver, no engine, seconds (`npm run test:unit`).
 * `integration`: everything on real parts (DynamoDB Local started once in globalSetup, terraform, the Lambda
 * runtime client). `npm test` runs both. Test files are compiled file by file without type checking (tsconfig's
 * isolatedModules makes ts-jest transpile only); test/lint/typecheck type checks the whole project once, strictly.
 */
const shared = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }],
  },
  setupFilesAfterEnv: ["<rootDir>/test/support/setup-after-env.ts"],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...shared,
      displayName: "unit",
      testMatch: ["<rootDir>/test/unit/**/*.test.ts"],
    },
    {
      ...shared,
      displayName: "integration",
      testMatch: ["<rootDir>/test/**/*.test.ts"],
      testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/unit/"],
      globalSetup: "<rootDir>/test/support/global-setup.ts",
      globalTeardown: "<rootDir>/test/support/global-teardown.ts",
    },
  ],
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/support/summary-reporter.js"],
};
