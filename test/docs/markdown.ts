import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The code blocks of a Markdown page, with what the page says about each. A block's kind comes from its fence's
 * language; HTML comments on the lines right before the fence (blank lines between are allowed) are its markers:
 *
 *   <!-- not-run: <reason> -->   the block is not executed; the docs test prints `SKIP:` with the reason
 *   <!-- file: <path> -->        a TypeScript module saved at <path> in the page's workspace, for a later block
 *                                 (a bundling command, an import) to use; it is type checked with the rest
 */
export type SnippetKind = "ts" | "sh" | "json" | "hcl" | "other";

export interface Snippet {
  /** The page, relative to the repository root (`docs/http-api.md`). */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: SnippetKind;
  /** The fence's language as written. */
  language: string;
  code: string;
  notRun?: string;
  file?: string;
}

const KINDS: Record<string, SnippetKind> = {
  ts: "ts",
  typescript: "ts",
  sh: "sh",
  bash: "sh",
  shell: "sh",
  json: "json",
  hcl: "hcl",
  terraform: "hcl",
};

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/;
const MARKER = /^\s*<!--\s*(not-run|file):\s*(.*?)\s*-->\s*$/;

export function readSnippets(root: string, page: string): Snippet[] {
  return parseSnippets(page, readFileSync(join(root, page), "utf8"));
}

export function parseSnippets(page: string, markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const snippets: Snippet[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = FENCE.exec(lines[index]!);
    if (!open) continue;
    const [, indent, fence, language] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !isClosingFence(lines[end]!, fence)) {
      body.push(lines[end]!.startsWith(indent) ? lines[end]!.slice(indent.length) : lines[end]!);
      end += 1;
    }
    if (end >= lines.length) {
      throw new Error(`${page}:${index + 1}: a code block is never closed`);
    }
    snippets.push({
      page,
      line: index + 1,
      kind: KINDS[language.toLowerCase()] ?? "other",
      language,
      code: `${body.join("\n")}\n`,
      ...markersBefore(page, lines, index),
    });
    index = end;
  }
  return snippets;
}

function isClosingFence(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.startsWith(fence) && /^[`~]+$/.test(trimmed);
}

function markersBefore(
  page: string,
  lines: string[],
  fenceIndex: number,
): Pick<Snippet, "notRun" | "file"> {
  const markers: Pick<Snippet, "notRun" | "file"> = {};
  for (let index = fenceIndex - 1; index >= 0; index -= 1) {
    const line = lines[index]!;
    if (line.trim() === "") continue;
    const marker = MARKER.exec(line);
    if (!marker) break;
    const [, name, value] = marker as unknown as [string, "not-run" | "file", string];
    if (value === "") throw new Error(`${page}:${index + 1}: <!-- ${name}: --> needs a value`);
    if (name === "not-run") markers.notRun = value;
    else markers.file = value;
  }
  if (markers.notRun !== undefined && markers.file !== undefined) {
    throw new Error(`${page}:${fenceIndex + 1}: a block is either not-run or a file, not both`);
  }
  return markers;
}

/**
 * What a block says it prints: `// prints: <text>` (TypeScript) or `# prints: <text>` (shell) comments, in
 * order. `…` in the text stands for anything within the line.
 */
export function expectedOutput(snippet: Snippet): string[] {
  const comment = snippet.kind === "ts" ? "//" : "#";
  const pattern = new RegExp(`${comment}\\s*prints:\\s*(.*?)\\s*$`);
  return snippet.code
    .split("\n")
    .map((line) => pattern.exec(line)?.[1])
    .filter((text): text is string => text !== undefined && text !== "");
}

/**
 * The first expected line that the output does not contain, in order (undefined when all are there). Each
 * expectation must match a later line than the previous one.
 */
export function missingOutput(expected: string[], output: string): string | undefined {
  const lines = output.split("\n");
  let from = 0;
  for (const text of expected) {
    const pattern = new RegExp(
      text
        .split("…")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*?"),
    );
    const found = lines.findIndex((line, index) => index >= from && pattern.test(line));
    if (found === -1) return text;
    from = found + 1;
  }
  return undefined;
}

/** `docs/http-api.md:120`: where a block starts, as editors and terminals link it. */
export function location(snippet: Snippet): string {
  return `${snippet.page}:${snippet.line}`;
}
