/**
 * Reads the HCL object expression inside a synthesized `${jsonencode({...})}` back into data, so tests can assert
 * on policy documents as JSON. Terraform references stay strings in `${...}` form; HCL's `$${` escape (a literal
 * `${`, as in IAM policy variables) becomes `${`, which is what AWS receives.
 */
export function parseJsonencode(expression: string): unknown {
  const match = /^\$\{jsonencode\(([\s\S]*)\)\}$/.exec(expression);
  if (!match) throw new Error(`Not a \${jsonencode(...)} expression: ${expression.slice(0, 80)}`);
  const parser = new Parser(match[1]!);
  const value = parser.value();
  parser.skipSpace();
  if (!parser.done())
    throw new Error(`Unexpected text at ${parser.position}: ${match[1]!.slice(parser.position)}`);
  return value;
}

class Parser {
  position = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.position >= this.text.length;
  }

  skipSpace(): void {
    while (/\s/.test(this.text[this.position] ?? "")) this.position++;
  }

  value(): unknown {
    this.skipSpace();
    const char = this.text[this.position];
    if (char === "{") return this.object();
    if (char === "[") return this.array();
    if (char === '"') return this.string();
    const raw = this.bare().trim();
    if (raw === "true") return true;
    if (raw === "false") return false;
    if (raw === "null") return null;
    if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
    return `\${${raw}}`;
  }

  private object(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.position++;
    for (;;) {
      this.skipSpace();
      if (this.text[this.position] === "}") {
        this.position++;
        return result;
      }
      const key = this.text[this.position] === '"' ? this.string() : this.bare().trim();
      this.skipSpace();
      const separator = this.text[this.position];
      if (separator !== "=" && separator !== ":") throw new Error(`Expected = at ${this.position}`);
      this.position++;
      result[key] = this.value();
      this.skipSpace();
      if (this.text[this.position] === ",") this.position++;
    }
  }

  private array(): unknown[] {
    const result: unknown[] = [];
    this.position++;
    for (;;) {
      this.skipSpace();
      if (this.text[this.position] === "]") {
        this.position++;
        return result;
      }
      result.push(this.value());
      this.skipSpace();
      if (this.text[this.position] === ",") this.position++;
    }
  }

  /** A quoted string; interpolations inside it are kept verbatim (they may contain quotes of their own). */
  private string(): string {
    let result = "";
    this.position++;
    for (;;) {
      const char = this.text[this.position];
      if (char === undefined) throw new Error("Unterminated string");
      if (char === '"') {
        this.position++;
        return result;
      }
      if (char === "\\") {
        const next = this.text[this.position + 1]!;
        result += next === "n" ? "\n" : next === "t" ? "\t" : next;
        this.position += 2;
      } else if (this.text.startsWith("$${", this.position)) {
        result += "${";
        this.position += 3;
      } else if (this.text.startsWith("${", this.position)) {
        const start = this.position;
        this.position += 2;
        this.skipBalanced("}");
        result += this.text.slice(start, this.position);
      } else {
        result += char;
        this.position++;
      }
    }
  }

  /** Skips to just after the closing `close`, across nested brackets and strings. */
  private skipBalanced(close: string): void {
    const pairs: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
    const stack = [close];
    while (stack.length > 0) {
      const char = this.text[this.position];
      if (char === undefined) throw new Error("Unbalanced expression");
      if (char === '"') {
        this.string();
        continue;
      }
      if (char === stack[stack.length - 1]) stack.pop();
      else if (pairs[char] !== undefined) stack.push(pairs[char]!);
      this.position++;
    }
  }

  /** A bare expression (reference, function call, conditional) up to the next `,`, `=`, `}` or `]` at depth 0. */
  private bare(): string {
    const start = this.position;
    const pairs: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
    for (;;) {
      const char = this.text[this.position];
      if (char === undefined || char === "," || char === "}" || char === "]") break;
      if (
        char === "=" &&
        this.text[this.position + 1] !== "=" &&
        !"=!<>".includes(this.text[this.position - 1] ?? "")
      )
        break;
      if (char === '"') {
        this.string();
        continue;
      }
      this.position++;
      if (pairs[char] !== undefined) this.skipBalanced(pairs[char]!);
    }
    return this.text.slice(start, this.position);
  }
}
