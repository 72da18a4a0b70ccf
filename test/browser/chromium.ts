import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

export type ChromiumLookup = { path: string } | { missing: string };

const NAMES = ["chromium", "chromium-browser"];

/** Debian's Chromium (apt-get install chromium): `CHROME_PATH` when set, else `chromium` or `chromium-browser` on PATH. */
export function findChromium(): ChromiumLookup {
  const configured = process.env.CHROME_PATH;
  if (configured) {
    return isExecutable(configured)
      ? { path: configured }
      : { missing: `CHROME_PATH is ${configured}, which is not an executable file` };
  }
  for (const directory of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    for (const name of NAMES) {
      const candidate = join(directory, name);
      if (isExecutable(candidate)) return { path: candidate };
    }
  }
  return { missing: `no CHROME_PATH, and neither ${NAMES.join(" nor ")} on PATH` };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
