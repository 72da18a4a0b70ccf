import { checkFor } from "./command-checks";
import { expectedOutput, missingOutput, parseSnippets } from "./markdown";
import { shellCommands } from "./shell-words";

// The parts the docs test stands on: if they misread a page, blocks would be skipped or run wrongly unnoticed.
describe("docs tooling", () => {
  it("reads blocks with their kind, line and markers", () => {
    const page = [
      "# Page",
      "<!-- not-run: it needs AWS -->",
      "",
      "```sh",
      "terraform apply",
      "```",
      "<!-- file: graphs/a.ts -->",
      "```ts",
      "export const a = 1;",
      "```",
      "```text",
      "output",
      "```",
    ].join("\n");
    const [sh, ts, text] = parseSnippets("docs/page.md", page);
    expect(sh).toMatchObject({ kind: "sh", line: 4, notRun: "it needs AWS" });
    expect(ts).toMatchObject({ kind: "ts", line: 8, file: "graphs/a.ts" });
    expect(text).toMatchObject({ kind: "other", language: "text" });
    expect(text?.notRun).toBeUndefined();
  });

  it("refuses a block never closed and a marker without a value", () => {
    expect(() => parseSnippets("p.md", "```ts\nconst a = 1;\n")).toThrow(/never closed/);
    expect(() => parseSnippets("p.md", "<!-- not-run: -->\n```sh\nls\n```\n")).toThrow(
      /needs a value/,
    );
  });

  it("finds the expected output in order, `…` standing for anything", () => {
    const [block] = parseSnippets(
      "p.md",
      "```ts\nconsole.log(1); // prints: a…c\nf(); // prints: d\n```\n",
    );
    const expected = expectedOutput(block!);
    expect(expected).toEqual(["a…c", "d"]);
    expect(missingOutput(expected, "abc\nd\n")).toBeUndefined();
    expect(missingOutput(expected, "d\nabc\n")).toBe("d");
    expect(missingOutput(expected, "ab\nd\n")).toBe("a…c");
  });

  it("splits shell blocks into commands, keeping quotes and $(...) whole", () => {
    const commands = shellCommands(
      [
        "export TOKEN=$(npm run -s token -- --tenant demo)",
        "curl -s 'http://x/a b' \\",
        "  -d '{\"a\":1}' # a comment",
        "PORT=8080 npm start && npm test",
      ].join("\n"),
    );
    expect(commands.map((command) => command.words)).toEqual([
      ["export", "TOKEN=$(npm run -s token -- --tenant demo)"],
      ["curl", "-s", "http://x/a b", "-d", '{"a":1}'],
      ["npm", "start"],
      ["npm", "test"],
    ]);
    expect(commands[2]!.assignments).toEqual({ PORT: "8080" });
  });

  it("checks the commands that cannot run as written, and only those", () => {
    const check = (text: string) => checkFor(shellCommands(text)[0]!) !== undefined;
    for (const text of [
      "npm ci",
      "npm start",
      "npm test",
      "npm run test:unit",
      "npm run synth",
      "npm run bench -- store",
      "npm run dev:dynamodb",
      "terraform apply",
      "docker build .",
      "scripts/push-image.sh --repository r",
    ]) {
      expect({ text, checked: check(text) }).toEqual({ text, checked: true });
    }
    for (const text of [
      "npm run -s token -- --tenant a",
      "curl -s x",
      "scripts/push-image.sh --dry-run",
    ]) {
      expect({ text, checked: check(text) }).toEqual({ text, checked: false });
    }
  });
});
