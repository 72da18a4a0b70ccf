import { MEMORY_TABLE_VERSION } from "../src/shared/version";

/**
 * The module's release: the repository's one semantic version (package.json's, which src/shared/version.ts mirrors),
 * tagged `v<version>` in git. CHANGELOG.md's newest release heading names the same version (a test keeps the
 * three equal), and the module says which one it is (output `module_version`, the generated README).
 */
export const MODULE_VERSION = MEMORY_TABLE_VERSION;

/** The git tag consumers pin with `?ref=`. */
export const MODULE_TAG = `v${MODULE_VERSION}`;
