import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { InvalidConfigurationError, StoreEmbeddingError } from "../shared/errors";
import { describeStoreInput, fail } from "./validation";

/**
 * Optional semantic search, as LangGraph's InMemoryStore offers it: `index: {dims, embeddings, fields}`. A put
 * embeds the texts at the index's field paths (or the put's own `index` paths; `false` embeds nothing), and a
 * search with a `query` ranks the items under its prefix by cosine similarity to the query's embedding (an item's
 * score is its best vector's), items without vectors after the ranked ones.
 *
 * The honest limit: vectors are compared in the function, not by a vector index. A query search reads every item
 * under its prefix (the filter applies after reading; each item carries its vectors, 4 bytes per dimension each,
 * which every read of the item pays for, plain searches included) and refuses, with StoreSearchTooBroadError, a
 * prefix holding more than `maxCandidates` items (default 1,000) rather than rank some of them. Keep semantic
 * namespaces small (one user's memories), or use a vector database.
 *
 * Field paths: `$` (the whole value, as JSON), `a.b.c`, `list[*]` (every element), `list[0]`, `list[-1]` and `*`
 * (every field). Strings are embedded as they are, numbers and booleans as text, objects and arrays as JSON.
 */
export interface StoreIndexConfig {
  /** Dimensions of the embedding vectors. */
  dims: number;
  /** A LangChain embeddings model (`embedDocuments` at put, `embedQuery` at search). */
  embeddings: EmbeddingsInterface;
  /** Field paths embedded by default (default `["$"]`, the whole value). */
  fields?: string[];
  /** Most items one query search ranks (default 1,000). */
  maxCandidates?: number;
}

export const DEFAULT_MAX_CANDIDATES = 1000;
/** Most dimensions accepted (the largest common models use 3,072). */
const MAX_DIMS = 16_384;

type PathStep = { field: string } | { index: number } | { every: "element" | "field" };
type FieldPath = { whole: true } | { whole: false; steps: PathStep[] };

const KNOWN_OPTIONS = new Set(["dims", "embeddings", "fields", "maxCandidates"]);

export class SemanticIndex {
  readonly dims: number;
  readonly maxCandidates: number;
  private readonly embeddings: EmbeddingsInterface;
  private readonly defaultPaths: FieldPath[];

  constructor(config: StoreIndexConfig) {
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new InvalidConfigurationError(
        "index",
        `expected an object, got ${describeStoreInput(config)}`,
      );
    }
    for (const name of Object.keys(config)) {
      if (!KNOWN_OPTIONS.has(name)) {
        throw new InvalidConfigurationError(
          `index.${name}`,
          `expected one of ${[...KNOWN_OPTIONS].join(", ")}, got an unknown option`,
        );
      }
    }
    if (!Number.isSafeInteger(config.dims) || config.dims < 1 || config.dims > MAX_DIMS) {
      throw new InvalidConfigurationError(
        "index.dims",
        `expected an integer from 1 to ${MAX_DIMS}, got ${describeStoreInput(config.dims)}`,
      );
    }
    const embeddings = config.embeddings as Partial<EmbeddingsInterface> | undefined;
    if (
      typeof embeddings?.embedDocuments !== "function" ||
      typeof embeddings.embedQuery !== "function"
    ) {
      throw new InvalidConfigurationError(
        "index.embeddings",
        `expected an Embeddings instance (embedDocuments, embedQuery), got ${describeStoreInput(embeddings)}`,
      );
    }
    const maxCandidates = config.maxCandidates ?? DEFAULT_MAX_CANDIDATES;
    if (!Number.isSafeInteger(maxCandidates) || maxCandidates < 1) {
      throw new InvalidConfigurationError(
        "index.maxCandidates",
        `expected a positive integer, got ${describeStoreInput(config.maxCandidates)}`,
      );
    }
    const fields = config.fields ?? ["$"];
    if (!Array.isArray(fields) || fields.length === 0) {
      throw new InvalidConfigurationError(
        "index.fields",
        `expected a non-empty array of field paths, got ${describeStoreInput(fields)}`,
      );
    }
    this.dims = config.dims;
    this.maxCandidates = maxCandidates;
    this.embeddings = config.embeddings;
    this.defaultPaths = fields.map((path, index) => {
      const parsed = parseFieldPath(path);
      if (!parsed) {
        throw new InvalidConfigurationError(
          `index.fields[${index}]`,
          "expected a field path such as $, a.b, list[*] or list[0]",
        );
      }
      return parsed;
    });
  }

  /** Checks a put's own `index` paths before anything is embedded or written. */
  assertPaths(field: string, paths: readonly string[]): void {
    paths.forEach((path, index) => {
      if (!parseFieldPath(path)) {
        fail(`${field}[${index}]`, "expected a field path such as $, a.b, list[*] or list[0]");
      }
    });
  }

  /** The distinct texts a put embeds: at its own paths, the index's (undefined), or none (`false`). */
  textsOf(value: Record<string, unknown>, paths: false | readonly string[] | undefined): string[] {
    if (paths === false) return [];
    const parsed = paths === undefined ? this.defaultPaths : paths.map((p) => parseFieldPath(p)!);
    const texts = new Set<string>();
    for (const path of parsed) for (const text of textsAt(value, path)) texts.add(text);
    return [...texts];
  }

  /** Embeds the texts of several puts with one model call; returns each put's vectors. */
  async embedDocuments(textsPerPut: readonly string[][]): Promise<Float32Array[][]> {
    const distinct = [...new Set(textsPerPut.flat())];
    if (distinct.length === 0) return textsPerPut.map(() => []);
    const vectors = await this.embeddings.embedDocuments(distinct);
    if (!Array.isArray(vectors) || vectors.length !== distinct.length) {
      throw new StoreEmbeddingError(
        `expected ${distinct.length} vectors from embedDocuments, got ${Array.isArray(vectors) ? vectors.length : describeStoreInput(vectors)}`,
      );
    }
    const byText = new Map(distinct.map((text, i) => [text, this.checkedVector(vectors[i])]));
    return textsPerPut.map((texts) => texts.map((text) => byText.get(text)!));
  }

  /** The embedding of each distinct query. */
  async embedQueries(queries: Iterable<string>): Promise<Map<string, Float32Array>> {
    const distinct = [...new Set(queries)];
    const vectors = await Promise.all(distinct.map((query) => this.embeddings.embedQuery(query)));
    return new Map(distinct.map((query, i) => [query, this.checkedVector(vectors[i])]));
  }

  private checkedVector(vector: unknown): Float32Array {
    if (!Array.isArray(vector) || vector.length !== this.dims) {
      throw new StoreEmbeddingError(
        `expected vectors of ${this.dims} numbers (index.dims), got ${Array.isArray(vector) ? `${vector.length} numbers` : describeStoreInput(vector)}`,
      );
    }
    if (!vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new StoreEmbeddingError("expected finite numbers in every vector");
    }
    return Float32Array.from(vector as number[]);
  }
}

/** The best cosine similarity of an item's vectors to the query's, or undefined when it has none. */
export function bestSimilarity(
  query: Float32Array,
  vectors: readonly Float32Array[] | undefined,
): number | undefined {
  let best: number | undefined;
  for (const vector of vectors ?? []) {
    if (vector.length !== query.length) continue; // written under other dims: not comparable
    const score = cosine(query, vector);
    if (best === undefined || score > best) best = score;
  }
  return best;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA > 0 && normB > 0 ? dot / Math.sqrt(normA * normB) : 0;
}

/** Vectors as stored: float32 little-endian, one after another. */
export function packVectors(vectors: readonly Float32Array[]): Uint8Array {
  const dims = vectors[0]?.length ?? 0;
  const bytes = new Uint8Array(vectors.length * dims * 4);
  const view = new DataView(bytes.buffer);
  vectors.forEach((vector, v) => {
    for (let i = 0; i < dims; i += 1) view.setFloat32((v * dims + i) * 4, vector[i]!, true);
  });
  return bytes;
}

/** Stored vectors of `dims` dimensions; none when the bytes were written under other dims. */
export function unpackVectors(bytes: Uint8Array, dims: number): Float32Array[] {
  if (bytes.byteLength === 0 || bytes.byteLength % (dims * 4) !== 0) return [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vectors: Float32Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += dims * 4) {
    const vector = new Float32Array(dims);
    for (let i = 0; i < dims; i += 1) vector[i] = view.getFloat32(offset + i * 4, true);
    vectors.push(vector);
  }
  return vectors;
}

/** Bytes the vectors take in an item. */
export function vectorBytes(vectors: readonly Float32Array[]): number {
  return vectors.reduce((sum, vector) => sum + vector.length * 4, 0);
}

function parseFieldPath(path: string): FieldPath | undefined {
  if (path === "$") return { whole: true };
  const steps: PathStep[] = [];
  for (const segment of path.split(".")) {
    const match = /^([^[\]]*)((?:\[(?:\*|-?\d+)\])*)$/.exec(segment);
    if (!match) return undefined;
    const [, name, brackets] = match;
    if (name === "*") steps.push({ every: "field" });
    else if (name) steps.push({ field: name });
    else if (!brackets) return undefined;
    for (const [, index] of brackets!.matchAll(/\[(\*|-?\d+)\]/g)) {
      steps.push(index === "*" ? { every: "element" } : { index: Number(index) });
    }
  }
  return { whole: false, steps };
}

function textsAt(value: unknown, path: FieldPath): string[] {
  if (path.whole) return [JSON.stringify(value, null, 2)];
  let current: unknown[] = [value];
  for (const step of path.steps) {
    const next: unknown[] = [];
    for (const node of current) {
      if ("field" in step) {
        if (isRecord(node) && Object.hasOwn(node, step.field)) next.push(node[step.field]);
      } else if ("index" in step) {
        if (!Array.isArray(node)) continue;
        const index = step.index < 0 ? node.length + step.index : step.index;
        if (index >= 0 && index < node.length) next.push(node[index]);
      } else if (Array.isArray(node)) {
        next.push(...(node as unknown[]));
      } else if (step.every === "field" && isRecord(node)) {
        next.push(...Object.values(node));
      }
    }
    current = next;
  }
  return current.flatMap((node) => {
    if (typeof node === "string") return node.length > 0 ? [node] : [];
    if (typeof node === "number" || typeof node === "boolean") return [String(node)];
    if (typeof node === "object" && node !== null) return [JSON.stringify(node, null, 2)];
    return [];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
