import { InvalidStoreOperationError } from "../../../src/shared/errors";
import {
  bestSimilarity,
  packVectors,
  SemanticIndex,
  unpackVectors,
} from "../../../src/store/semantic-index";
import { WordCountEmbeddings } from "../../store/store-fixtures";

const index = (fields?: string[]) =>
  new SemanticIndex({ dims: 16, embeddings: new WordCountEmbeddings(), fields });

describe("SemanticIndex", () => {
  const value = {
    title: "Tea notes",
    size: 3,
    done: false,
    tags: ["green", "black", ""],
    meta: { author: { name: "Ann" }, list: [{ text: "first" }, { text: "last" }] },
  };

  it("extracts the texts at field paths", () => {
    expect(index().textsOf(value, undefined)).toEqual([JSON.stringify(value, null, 2)]);
    expect(index(["title", "size", "done"]).textsOf(value, undefined)).toEqual([
      "Tea notes",
      "3",
      "false",
    ]);
    expect(index().textsOf(value, ["tags[*]"])).toEqual(["green", "black"]);
    expect(index().textsOf(value, ["tags[0]", "tags[-2]", "tags[9]"])).toEqual(["green", "black"]);
    expect(index().textsOf(value, ["meta.author.name", "meta.list[*].text"])).toEqual([
      "Ann",
      "first",
      "last",
    ]);
    expect(index().textsOf(value, ["meta.author"])).toEqual([
      JSON.stringify({ name: "Ann" }, null, 2),
    ]);
    expect(index().textsOf(value, ["meta.*.name"])).toEqual(["Ann"]);
    expect(index().textsOf(value, ["missing", "title.deeper", "tags.x"])).toEqual([]);
    expect(index().textsOf(value, false)).toEqual([]);
  });

  it("refuses a put's malformed field paths", () => {
    expect(() => index().assertPaths("index", ["ok", "a[", "b[*]"])).toThrow(
      InvalidStoreOperationError,
    );
    expect(() => index().assertPaths("index", ["ok", "a["])).toThrow(
      "Invalid index[1]: expected a field path",
    );
  });

  it("embeds the distinct texts of a batch's puts with one model call", async () => {
    const embeddings = new WordCountEmbeddings();
    const semantic = new SemanticIndex({ dims: 16, embeddings });
    const vectors = await semantic.embedDocuments([["tea", "coffee"], [], ["tea"]]);
    expect(embeddings.documentCalls).toEqual([["tea", "coffee"]]);
    expect(vectors.map((list) => list.length)).toEqual([2, 0, 1]);
    expect(vectors[2]![0]).toEqual(vectors[0]![0]);
  });

  it("packs vectors as float32 and reads back only vectors of its dims", () => {
    const vectors = [Float32Array.from([1, -2.5, 0.125]), Float32Array.from([3, 4, 5])];
    const packed = packVectors(vectors);
    expect(packed.byteLength).toBe(24);
    expect(unpackVectors(packed, 3)).toEqual(vectors);
    expect(unpackVectors(packed, 5)).toEqual([]);
    expect(unpackVectors(new Uint8Array(0), 3)).toEqual([]);
  });

  it("scores an item by its best cosine similarity, none without comparable vectors", () => {
    const query = Float32Array.from([1, 0]);
    expect(
      bestSimilarity(query, [Float32Array.from([0, 1]), Float32Array.from([1, 1])]),
    ).toBeCloseTo(Math.SQRT1_2);
    expect(bestSimilarity(query, [Float32Array.from([0, 0])])).toBe(0);
    expect(bestSimilarity(query, [Float32Array.from([1, 0, 0])])).toBeUndefined();
    expect(bestSimilarity(query, undefined)).toBeUndefined();
  });
});
