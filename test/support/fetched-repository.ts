import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * A public repository a long check builds or runs (a LangGraph UI, the reference server's tests), brought by the
 * `fetch` tool and never committed here: `<UI_MIRROR_DIR>/<owner>+<name>/repo` (default /work/.mirror), a git
 * directory without a work tree, or a clone named by the check's own variable.
 */
const MIRROR_DIR_VARIABLE = "UI_MIRROR_DIR";
const DEFAULT_MIRROR_DIR = "/work/.mirror";

export type FetchedRepository = { gitDir: string; commit: string } | { missing: string };

/** The repository's copy and its commit, or what is missing (for the caller's SKIP line). */
export function findFetchedRepository(
  repository: string,
  sourceVariable: string,
  env: NodeJS.ProcessEnv = process.env,
): FetchedRepository {
  const configured = env[sourceVariable];
  const mirror = join(
    env[MIRROR_DIR_VARIABLE] || DEFAULT_MIRROR_DIR,
    repository.replace("/", "+"),
    "repo",
  );
  const candidate = configured || mirror;
  if (!existsSync(candidate)) {
    return {
      missing: configured
        ? `${sourceVariable} is ${configured}, which does not exist`
        : `no copy of github.com/${repository} at ${mirror} (bring it with the fetch tool, or name a clone in ${sourceVariable})`,
    };
  }
  try {
    const gitDir = execFileSync("git", ["-C", candidate, "rev-parse", "--absolute-git-dir"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
    const commit = execFileSync("git", ["--git-dir", gitDir, "rev-parse", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
    return { gitDir, commit };
  } catch (error) {
    return { missing: `${candidate} is not a git repository with a commit: ${String(error)}` };
  }
}
