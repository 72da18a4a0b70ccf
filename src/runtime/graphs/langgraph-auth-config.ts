import { dirname, resolve } from "node:path";
import { InvalidConfigurationError } from "../../shared/errors";
import { checkLangGraphAuth, type LangGraphAuth } from "../auth/langgraph-auth";
import { describeConfigValue, isRecord } from "./config-values";
import { importGraphModule, readExport } from "./graph-module-import";
import { checkModuleFile, parseGraphEntry, readConfig } from "./langgraph-json";

/**
 * The `auth` of a project's langgraph.json (`"auth": {"path": "./auth.ts:auth"}`), loaded as LangGraph Server loads
 * it: the path is relative to langgraph.json, the export defaults to `default`, and the module loads as the graphs
 * do (TypeScript through the project's tsx). Undefined when the file names no auth. Give it to the handler as its
 * `auth` option. A missing file, a module that fails to load, or an export that is not an `Auth` instance throws
 * InvalidConfigurationError naming `auth.path`. `disable_studio_auth` has no effect here: every request, Studio's
 * included, carries a verified credential.
 */
export async function loadLangGraphAuth(configPath: string): Promise<LangGraphAuth | undefined> {
  const path = resolve(configPath);
  const projectDir = dirname(path);
  const config = await readConfig(path);
  const auth = config.auth;
  if (auth === undefined || auth === null) return undefined;
  if (!isRecord(auth)) {
    throw new InvalidConfigurationError(
      "auth",
      `expected an object with a path ("<path>:<export>"), got ${describeConfigValue(auth)}`,
    );
  }
  if (auth.path === undefined || auth.path === null) return undefined;
  if (typeof auth.path !== "string") {
    throw new InvalidConfigurationError(
      "auth.path",
      `expected "<path>:<export>", got ${describeConfigValue(auth.path)}`,
    );
  }
  // "./auth.ts" alone names its default export, as on LangGraph Server.
  const spec = auth.path.includes(":") ? auth.path : `${auth.path}:`;
  const entry = parseGraphEntry("auth", spec, projectDir, "auth.path");
  await checkModuleFile(entry);
  const loaded = await importGraphModule(entry, projectDir);
  return checkLangGraphAuth(readExport(loaded, entry), "auth.path");
}
