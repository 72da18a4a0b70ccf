/**
 * A small Dockerfile reader for the tests: instructions (continuations joined, comments dropped), stages, and
 * `ARG` defaults substituted into `FROM`, which is all the checks need. No Docker engine runs here.
 */
export interface Instruction {
  keyword: string;
  /** The arguments, as written (continuations joined with a space). */
  args: string;
}

export interface Stage {
  /** The image or earlier stage it starts from, with ARG defaults substituted. */
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface ParsedDockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

export function parseDockerfile(text: string): ParsedDockerfile {
  const instructions = joinLines(text).map((line) => {
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    return { keyword: match[1]!.toUpperCase(), args: match[2]! };
  });
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") {
      const words = instruction.args.split(/\s+/).filter((word) => !word.startsWith("--"));
      const from = words[0]!.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, a: string, b: string) => globalArgs[a ?? b] ?? "",
      );
      const asIndex = words.findIndex((word) => word.toUpperCase() === "AS");
      stages.push({
        from,
        name: asIndex === -1 ? undefined : words[asIndex + 1],
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === "ARG") {
        const [name, ...value] = instruction.args.split("=");
        globalArgs[name!.trim()] = value.join("=").trim();
      }
    } else {
      stages[stages.length - 1]!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

/** `ENTRYPOINT`/`CMD` in exec form (a JSON array); undefined for the shell form. */
export function execForm(instruction: Instruction | undefined): string[] | undefined {
  if (!instruction) return undefined;
  try {
    const parsed: unknown = JSON.parse(instruction.args);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === "string")
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}

/** `ENV` pairs of a stage (`KEY=value` form). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of stage.instructions.filter((item) => item.keyword === "ENV")) {
    for (const match of instruction.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) {
      env[match[1]!] = match[2]!.replace(/^"|"$/g, "");
    }
  }
  return env;
}

/** The last instruction of a kind in a stage (Docker keeps the last ENTRYPOINT, CMD, USER, WORKDIR). */
export function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((item) => item.keyword === keyword).at(-1);
}

function joinLines(text: string): string[] {
  const lines: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (current === "" && (line === "" || line.startsWith("#"))) continue;
    if (current !== "" && line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push((current + line).trim());
    current = "";
  }
  if (current.trim() !== "") lines.push(current.trim());
  return lines;
}
