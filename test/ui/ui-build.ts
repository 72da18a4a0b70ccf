import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { findFetchedRepository, type FetchedRepository } from "../support/fetched-repository";

/**
 * The two LangGraph UIs, built as their own READMEs build them, unmodified: a copy of the repository's newest
 * commit (brought by the `fetch` tool, never committed here), installed with the package manager its
 * `packageManager` field pins, from its own lockfile, and `next build` with its own scripts. Google Fonts cannot be
 * downloaded here, so Next.js's own mock switch (NEXT_FONT_GOOGLE_MOCKED_RESPONSES) answers the font requests.
 * Builds are cached outside the clone, one folder per commit: a later run with the same commit reuses it.
 */

export interface UiSpec {
  /** Short name, also the cache folder's prefix. */
  name: "agent-chat-ui" | "agent-inbox";
  /** owner/name on GitHub. */
  repository: string;
  /** The variable naming another copy (a git directory or a work tree). */
  sourceVariable: string;
}

export const UIS: readonly UiSpec[] = [
  {
    name: "agent-chat-ui",
    repository: "langchain-ai/agent-chat-ui",
    sourceVariable: "AGENT_CHAT_UI_SOURCE",
  },
  {
    name: "agent-inbox",
    repository: "langchain-ai/agent-inbox",
    sourceVariable: "AGENT_INBOX_SOURCE",
  },
];

const CACHE_VARIABLE = "UI_BUILD_CACHE";
const BUILT_MARKER = ".memory-table-built.json";
const INSTALLED_MARKER = ".memory-table-installed";

export type UiSource = FetchedRepository;

export interface BuiltUi {
  spec: UiSpec;
  commit: string;
  /** The built app: `next start` runs here. */
  dir: string;
  /** True when this call built it (false: taken from the cache). */
  built: boolean;
  /** Install and build time of the build that made it. */
  buildSeconds: number;
}

/** The repository's copy, or what is missing (printed as the SKIP reason). */
export function findUiSource(spec: UiSpec, env: NodeJS.ProcessEnv = process.env): UiSource {
  return findFetchedRepository(spec.repository, spec.sourceVariable, env);
}

export function uiCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env[CACHE_VARIABLE] || join(homedir(), ".cache", "memory-table", "ui"));
}

/** The built UI of `source`'s commit: from the cache, or exported, installed and built now. */
export async function buildUi(
  spec: UiSpec,
  source: { gitDir: string; commit: string },
  log: (line: string) => void,
): Promise<BuiltUi> {
  const dir = join(uiCacheDir(), `${spec.name}-${source.commit.slice(0, 12)}`);
  const marker = join(dir, BUILT_MARKER);
  if (existsSync(marker)) {
    const recorded = JSON.parse(readFileSync(marker, "utf8")) as { buildSeconds: number };
    return { spec, commit: source.commit, dir, built: false, buildSeconds: recorded.buildSeconds };
  }
  const started = Date.now();
  const installed = join(dir, INSTALLED_MARKER);
  const manager = existsSync(installed) ? packageManager(dir) : undefined;
  const env = {
    ...process.env,
    CI: "1",
    NEXT_TELEMETRY_DISABLED: "1",
    // Next.js reads a .env of its own folder; nothing of ours (the dev server's variables) leaks into the build.
    NODE_ENV: "production",
  };
  delete (env as Record<string, string | undefined>).PORT;
  if (!manager) {
    // An install that stopped half-way leaves no marker: start that commit afresh.
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`${spec.name}: exporting ${source.commit.slice(0, 12)} to ${dir}`);
    execFileSync(
      "sh",
      [
        "-c",
        `git --git-dir "$1" archive --format=tar HEAD | tar -x -C "$2"`,
        "sh",
        source.gitDir,
        dir,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
  }
  const pinned = manager ?? packageManager(dir);
  if (!manager) {
    log(`${spec.name}: installing with ${pinned} (its lockfile)`);
    const install = pinned.startsWith("pnpm@")
      ? ["install", "--frozen-lockfile"]
      : ["install", "--frozen-lockfile", "--non-interactive"];
    // Dev dependencies are needed to build: install as in development, build as in production.
    await run(
      "npx",
      ["-y", pinned, ...install],
      dir,
      { ...env, NODE_ENV: "development" },
      log,
      spec.name,
    );
    writeFileSync(installed, new Date().toISOString());
  }
  log(`${spec.name}: next build (fonts mocked)`);
  // Turbopack (Next.js 16) downloads the font files a mocked stylesheet names, where webpack reads a path:
  // for it the font is served on loopback for the build's duration.
  const fontFile = systemFont();
  const fontServer = nextMajor(dir) >= 16 ? await serveFile(fontFile) : undefined;
  try {
    // Written once Next.js is installed: the stylesheet URLs come from its own helpers.
    const fontMock = writeFontMock(dir, fontServer?.url ?? fontFile);
    await run(
      "npx",
      ["-y", pinned, "run", "build"],
      dir,
      { ...env, NEXT_FONT_GOOGLE_MOCKED_RESPONSES: fontMock },
      log,
      spec.name,
    );
  } finally {
    fontServer?.server.close();
  }
  const buildSeconds = Math.round((Date.now() - started) / 1000);
  writeFileSync(
    marker,
    JSON.stringify({
      commit: source.commit,
      manager: pinned,
      buildSeconds,
      at: new Date().toISOString(),
    }),
  );
  return { spec, commit: source.commit, dir, built: true, buildSeconds };
}

/** `pnpm@10.5.1` or `yarn@1.22.22`: the exact package manager of the repository's `packageManager` field. */
function packageManager(dir: string): string {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    packageManager?: string;
  };
  const pinned = pkg.packageManager?.split("+")[0];
  if (!pinned || !/^(pnpm|yarn|npm)@\d+\.\d+\.\d+$/.test(pinned)) {
    throw new Error(
      `expected packageManager like pnpm@10.5.1 in ${dir}/package.json, got ${pkg.packageManager}`,
    );
  }
  return pinned;
}

/**
 * Next.js's switch for builds without Google Fonts: a module mapping each stylesheet URL to its CSS, whose
 * `src: url(...)` an absolute path reads from disk (any other URL becomes the font's bytes). Turbopack (Next.js 16)
 * reads the module's own keys, so each family the app imports from `next/font/google` gets the URLs Next.js itself
 * builds for it (its own helpers, every `display`); webpack (Next.js 15) looks a URL up, and any other one is
 * answered too. Every family gets one face: a system font when one is installed, so screenshots read well.
 */
function writeFontMock(dir: string, font: string | undefined): string {
  const source = font
    ? `url(${font}) format('truetype')`
    : "url(mocked-font.woff2) format('woff2')";
  const path = join(dir, "google-fonts-mock.cjs");
  writeFileSync(
    path,
    `// Written by memory-table's UI tests: Next.js reads it instead of fonts.googleapis.com.
function stylesheet(url) {
  const family = /family=([^:&]+)/.exec(url)?.[1]?.replace(/\\+/g, " ") ?? "Mocked";
  return \`/* latin */
@font-face {
  font-family: '\${family}';
  font-style: normal;
  font-weight: 100 900;
  font-display: swap;
  src: ${source};
  unicode-range: U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+0304, U+0308, U+0329, U+2000-206F, U+20AC, U+2122, U+2191, U+2193, U+2212, U+2215, U+FEFF, U+FFFD;
}
\`;
}
const known = Object.fromEntries(${JSON.stringify(fontUrls(dir))}.map((url) => [url, stylesheet(url)]));
module.exports = new Proxy(known, { get: (target, url) => (typeof url === "string" ? target[url] ?? stylesheet(url) : undefined) });
`,
  );
  return path;
}

function systemFont(): string | undefined {
  return [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
  ].find((path) => existsSync(path));
}

function nextMajor(dir: string): number {
  const pkg = JSON.parse(readFileSync(join(dir, "node_modules/next/package.json"), "utf8")) as {
    version: string;
  };
  return Number(pkg.version.split(".")[0]);
}

/** `file` (or, without one, a few bytes standing for a font) at a loopback URL. */
async function serveFile(file: string | undefined): Promise<{ url: string; server: Server }> {
  const body = file ? readFileSync(file) : Buffer.from("mocked font");
  const server = createServer((_, response) => {
    response.writeHead(200, { "content-type": "font/ttf" });
    response.end(body);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${address.port}/font.ttf`, server };
}

/** The stylesheet URLs Next.js requests for the families the app's sources import from `next/font/google`. */
function fontUrls(dir: string): string[] {
  const load = createRequire(join(dir, "package.json"));
  const helpers = "next/dist/compiled/@next/font/dist/google/";
  const { getFontAxes } = load(`${helpers}get-font-axes`) as {
    getFontAxes: (family: string, weights: string[], styles: string[], axes?: string[]) => unknown;
  };
  const { getGoogleFontsUrl } = load(`${helpers}get-google-fonts-url`) as {
    getGoogleFontsUrl: (family: string, axes: unknown, display: string) => string;
  };
  const families = new Set<string>();
  const imports = /import\s*{([^}]*)}\s*from\s*["']next\/font\/google["']/g;
  for (const file of sourceFiles(join(dir, "src"))) {
    for (const match of readFileSync(file, "utf8").matchAll(imports)) {
      for (const name of match[1]!.split(",")) {
        const imported = name
          .trim()
          .split(/\s+as\s+/)[0]!
          .trim();
        if (imported) families.add(imported.replace(/_/g, " "));
      }
    }
  }
  const urls: string[] = [];
  for (const family of families) {
    let axes: unknown;
    try {
      axes = getFontAxes(family, ["variable"], ["normal"], undefined);
    } catch {
      axes = getFontAxes(family, ["400"], ["normal"], undefined);
    }
    for (const display of ["auto", "block", "swap", "fallback", "optional"]) {
      urls.push(getGoogleFontsUrl(family, axes, display));
    }
  }
  return urls;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.[cm]?[jt]sx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  name: string,
): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const tail: string[] = [];
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        tail.push(line);
        if (tail.length > 40) tail.shift();
        if (process.env.UI_BUILD_VERBOSE) log(`${name}: ${line}`);
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", fail);
    child.once("exit", (code, signal) => {
      if (code === 0) return done();
      fail(
        new Error(
          `${name}: ${command} ${args.join(" ")} failed (${code ?? signal}); last lines:\n${tail.join("\n")}`,
        ),
      );
    });
  });
}
