// Writes the run's totals to $MEMORY_TABLE_TEST_SUMMARY so .ci/run can print its closing line from Jest's own counts.
const { writeFileSync } = require("node:fs");

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.MEMORY_TABLE_TEST_SUMMARY;
    if (!file) return;
    const summary = {
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
      failedSuites: results.numFailedTestSuites,
    };
    writeFileSync(file, JSON.stringify(summary));
  }
}

module.exports = SummaryReporter;
