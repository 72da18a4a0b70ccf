// The official checkpoint validation suite uses Vitest's `expect.soft` once; Jest's plain `expect` is equivalent here.
const jestExpect = expect as typeof expect & { soft?: typeof expect };
if (typeof jestExpect.soft !== "function") jestExpect.soft = expect;
