import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SCANNER_EXCEPTIONS } from "../../modules/construct/scanner-exceptions";
import { rulesOf, SCANNERS } from "../../modules/scanner-config";
import { MODULE_DIR } from "../../modules/synth";

const read = (name: string) => readFileSync(join(MODULE_DIR, name), "utf8");

/** The ids a committed file lists (YAML list items, or trivy's one id per line), each with the comment above it. */
function listed(text: string): { id: string; comment: string }[] {
  const lines = text.split("\n");
  const found: { id: string; comment: string }[] = [];
  lines.forEach((line, index) => {
    const item = /^\s*- (\S+)$/.exec(line) ?? /^(AVD-[A-Z]+-\d+)$/.exec(line);
    if (item === null) return;
    const comments: string[] = [];
    for (let above = index - 1; above >= 0 && /^\s*#/.test(lines[above]!); above--) {
      comments.unshift(lines[above]!.replace(/^\s*# ?/, ""));
    }
    found.push({ id: item[1]!, comment: comments.join(" ") });
  });
  return found;
}

const FILES = { checkov: ".checkov.yaml", trivy: ".trivyignore", KICS: "kics.config" } as const;

describe("scanner exception files (checkov, trivy, KICS)", () => {
  it("names every rule by a scanner the module ships a file for", () => {
    for (const exception of Object.values(SCANNER_EXCEPTIONS)) {
      for (const rule of exception.rules) {
        expect(SCANNERS.some((scanner) => rule.startsWith(`${scanner} `))).toBe(true);
      }
    }
  });

  it.each(SCANNERS)(
    "lists exactly the documented %s exceptions, each with its resource and reason",
    (scanner) => {
      const expected = rulesOf(scanner);
      const found = listed(read(FILES[scanner]));
      expect(found.map(({ id }) => id)).toEqual(expected.map(({ id }) => id));
      found.forEach(({ comment }, index) => {
        const { exception } = expected[index]!;
        expect(comment.startsWith(`${exception.resource}: `)).toBe(true);
        // The reason, word for word (the file wraps it across comment lines).
        expect(comment.replace(/\s+/g, " ")).toContain(
          `Why: ${exception.why}.`.replace(/\s+/g, " "),
        );
      });
    },
  );

  it("lists the same rule ids in the README's table of exceptions", () => {
    const readme = read("README.md");
    const section = readme.slice(
      readme.indexOf("## Security defaults"),
      readme.indexOf("The same exceptions ship"),
    );
    for (const exception of Object.values(SCANNER_EXCEPTIONS)) {
      for (const rule of exception.rules) expect(section).toContain(`\`${rule}\``);
    }
    const idsInTable = [...section.matchAll(/`(checkov|trivy|KICS) ([^`]+)`/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(idsInTable.sort()).toEqual(
      Object.values(SCANNER_EXCEPTIONS)
        .flatMap((exception) => [...exception.rules])
        .sort(),
    );
  });
});
