/**
 * Shell blocks as lists of simple commands: enough of POSIX shell syntax (quotes, `$(...)`, comments, line
 * continuations, `&&`, `||`, `;`, `|`) to tell which commands a documentation block names. It does not run
 * anything; the docs test runs blocks with bash.
 */
export interface ShellCommand {
  /** `NAME=value` words before the program. */
  assignments: Record<string, string>;
  /** The program and its arguments, quotes removed. */
  words: string[];
  /** The command as written (for messages). */
  text: string;
}

export function shellCommands(script: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  for (const text of splitCommands(script)) {
    const words = splitWords(text);
    const assignments: Record<string, string> = {};
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
      const word = words.shift()!;
      const equals = word.indexOf("=");
      assignments[word.slice(0, equals)] = word.slice(equals + 1);
    }
    commands.push({ assignments, words, text });
  }
  return commands;
}

/** The commands of a script, split at newlines and control operators outside quotes and `$(...)`. */
function splitCommands(script: string): string[] {
  const commands: string[] = [];
  let current = "";
  let quote: "'" | '"' | undefined;
  let depth = 0;
  const flush = () => {
    if (current.trim() !== "") commands.push(current.trim());
    current = "";
  };
  const text = script.replace(/\\\n/g, " ");
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    const next = text[index + 1];
    if (quote) {
      current += char;
      if (char === "\\" && quote === '"' && next !== undefined) {
        current += next;
        index += 1;
      } else if (char === quote) quote = undefined;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      current += char;
      continue;
    }
    if (char === "$" && next === "(") {
      depth += 1;
      current += "$(";
      index += 1;
      continue;
    }
    if (depth > 0) {
      if (char === "(") depth += 1;
      if (char === ")") depth -= 1;
      current += char;
      continue;
    }
    if (char === "#" && (current === "" || /\s$/.test(current))) {
      // A comment runs to the end of the line.
      while (index < text.length && text[index] !== "\n") index += 1;
      flush();
      continue;
    }
    if (char === "\n" || char === ";") {
      flush();
      continue;
    }
    if ((char === "&" && next === "&") || (char === "|" && next === "|")) {
      flush();
      index += 1;
      continue;
    }
    if (char === "|") {
      flush();
      continue;
    }
    current += char;
  }
  if (quote) throw new Error(`unclosed ${quote} in a shell block`);
  flush();
  return commands;
}

/** The words of one command, with quotes removed (`$(...)` kept as one word). */
function splitWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  let depth = 0;
  for (let index = 0; index < command.length; index += 1) {
    const char = command[index]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else word += char;
      continue;
    }
    if (depth > 0) {
      if (char === "(") depth += 1;
      if (char === ")") depth -= 1;
      word += char;
      continue;
    }
    if (char === "$" && command[index + 1] === "(") {
      depth += 1;
      word += "$(";
      index += 1;
      inWord = true;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
      continue;
    }
    if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      continue;
    }
    word += char;
    inWord = true;
  }
  if (inWord) words.push(word);
  return words;
}
