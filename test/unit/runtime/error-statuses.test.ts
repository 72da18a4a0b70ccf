import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ERROR_STATUSES } from "../../../src/runtime/http/routes";
import * as errors from "../../../src/shared/errors";

// Statuses are decided in one place: ERROR_STATUSES maps each domain error to a status per face, and route
// handlers (the faces) throw domain errors, never a status. Only the router and body parser (http.ts) answer
// with an HttpError of their own, for what is refused before any face runs.
const ROOT = resolve(__dirname, "../../..");
const HTTP_DIR = join(ROOT, "src/runtime/http");

/** Every source file of the HTTP layer but http.ts, with its text. */
function faceSources(): Array<[string, string]> {
  return readdirSync(HTTP_DIR)
    .filter((name) => name.endsWith(".ts") && name !== "http.ts")
    .map((name) => [name, readFileSync(join(HTTP_DIR, name), "utf8")]);
}

/**
 * Error classes of errors.ts a request never answers with a status of its own: the handler's options are checked
 * while it is built, before any request; the others answer as an unexpected error (500 with an error id).
 */
const UNMAPPED = new Set(["InvalidConfigurationError", "RunDeadlineError", "StoreEmbeddingError"]);

describe("ERROR_STATUSES", () => {
  it("maps every class to a 4xx or 5xx status on both faces", () => {
    for (const [type, statuses] of ERROR_STATUSES) {
      for (const face of ["simple", "server"] as const) {
        expect([type.name, face, statuses[face] >= 400 && statuses[face] <= 599]).toEqual([
          type.name,
          face,
          true,
        ]);
      }
    }
  });

  it("lists subclasses before their parents (the first match wins)", () => {
    ERROR_STATUSES.forEach(([type], index) => {
      for (const [earlier] of ERROR_STATUSES.slice(0, index)) {
        expect([type.name, type.prototype instanceof earlier]).toEqual([type.name, false]);
      }
    });
  });

  it("maps every Memory Table error a route handler or the handler throws", () => {
    const sources: Array<[string, string]> = [
      ...faceSources(),
      ["handler.ts", readFileSync(join(ROOT, "src/runtime/handler.ts"), "utf8")],
    ];
    const thrown = new Set<string>();
    for (const [, text] of sources) {
      for (const match of text.matchAll(/throw new (\w+Error)\(/g)) thrown.add(match[1]!);
    }
    const exported = errors as unknown as Record<string, unknown>;
    const unmapped = [...thrown].filter(
      (name) =>
        name in exported &&
        !UNMAPPED.has(name) &&
        !ERROR_STATUSES.some(([type]) => type === exported[name]),
    );
    expect(unmapped).toEqual([]);
  });
});

describe("the faces", () => {
  it("throw domain errors: no file of src/runtime/http but http.ts mentions HttpError", () => {
    const mentions = faceSources()
      .filter(([, text]) => text.includes("HttpError"))
      .map(([name]) => name);
    expect(mentions).toEqual([]);
  });
});
