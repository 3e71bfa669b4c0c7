import {describe, expect, it} from "vitest";
import {cosineOfUnitVectors, fuseRankings, unitVector, vectorFromBlob, vectorToBlob} from "../../src/core/node/documents/chunkVectors.js";

describe("retrieval's fusion of BM25 and embeddings (#23)", () => {
    it("with one ranking (no embedding model), the fused order is that ranking: BM25 alone as before", () => {
        expect(fuseRankings([[7, 3, 9]])).toEqual([7, 3, 9]);
    });

    it("a passage BM25 does not find at all still ranks when the vector half ranks it first", () => {
        // BM25 found 1 and 2; the vectors rank 5 (no word in common with the query) first: it is given, after the two both rankings hold.
        expect(fuseRankings([[1, 2], [5, 2, 1]])).toEqual([1, 2, 5]);
        // With BM25 finding nothing, the order is the vectors'.
        expect(fuseRankings([[], [5, 2, 1]])).toEqual([5, 2, 1]);
    });

    it("reciprocal rank fusion: a passage both rankings place high beats one that only one ranking places first", () => {
        // 1/(60+1) + 0 < 1/(60+2) + 1/(60+2): second in both beats first in one.
        expect(fuseRankings([[10, 20, 30], [40, 20, 50]])[0]).toBe(20);
        // Equal scores keep the order of first appearance, BM25's first.
        expect(fuseRankings([[10], [40]])).toEqual([10, 40]);
    });

    it("vectors are stored at unit length, so that their dot product is the cosine similarity; the BLOB round trip is exact", () => {
        const vector = unitVector([3, 4]);
        expect(Array.from(vector)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
        expect(cosineOfUnitVectors(vector, vector)).toBeCloseTo(1, 6);
        expect(cosineOfUnitVectors(vector, unitVector([-4, 3]))).toBeCloseTo(0, 6);
        expect(Array.from(unitVector([0, 0]))).toEqual([0, 0]);
        expect(cosineOfUnitVectors(vector, unitVector([1, 0, 0])), "vectors of another size (another model) are never similar").toBe(0);
        const stored = Float32Array.from([0.5, -0.25, 1e-8, 0]);
        expect(vectorFromBlob(vectorToBlob(stored))).toEqual(stored);
    });
});
