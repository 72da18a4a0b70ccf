/** This package's version (package.json's; a unit test keeps the two equal). */
export const MEMORY_TABLE_VERSION = "0.2.0";
