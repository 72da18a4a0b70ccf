import { buildApp, renderModuleFiles, writeModuleFiles } from "./modules/synth";

/**
 * The CDKTF app: `npm run synth` (or `cdktf synth`) writes both stacks to cdktf.out and regenerates the committed
 * HCL module in modules/memory-table from the module stack.
 */
const { app, moduleStack } = buildApp();
app.synth();
writeModuleFiles(renderModuleFiles(moduleStack));
