/** Embeddings of chunks, as retrieval keeps and compares them: unit-length float32 vectors, stored as BLOBs. */

/** The vector scaled to unit length (so that a dot product is the cosine similarity); all zeros stays all zeros. */
export function unitVector(values: ArrayLike<number>): Float32Array {
    let norm = 0;
    for (let index = 0; index < values.length; index++)
        norm += values[index]! * values[index]!;
    norm = Math.sqrt(norm);
    const unit = new Float32Array(values.length);
    if (norm > 0)
        for (let index = 0; index < values.length; index++)
            unit[index] = values[index]! / norm;
    return unit;
}

/** The BLOB a vector is stored as: its float32 values, little-endian. */
export function vectorToBlob(vector: Float32Array): Buffer {
    const blob = Buffer.alloc(vector.length * 4);
    vector.forEach((value, index) => blob.writeFloatLE(value, index * 4));
    return blob;
}

export function vectorFromBlob(blob: Uint8Array): Float32Array {
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    return Float32Array.from({length: Math.floor(blob.byteLength / 4)}, (_, index) => view.getFloat32(index * 4, true));
}

/** The cosine similarity of two unit vectors; 0 when their lengths differ (vectors of another model). */
export function cosineOfUnitVectors(a: Float32Array, b: Float32Array): number {
    if (a.length !== b.length)
        return 0;
    let dot = 0;
    for (let index = 0; index < a.length; index++)
        dot += a[index]! * b[index]!;
    return dot;
}

/** Reciprocal rank fusion's damping constant (Cormack et al. 2009): a first place in one ranking does not drown the other. */
const rrfK = 60;

/**
 * Reciprocal rank fusion: each item scores the sum of `1 / (60 + rank)` (rank from 1) over the
 * rankings that hold it, best score first. Ties keep the order of first appearance, earlier
 * rankings first, so that with one ranking the result is that ranking.
 */
export function fuseRankings<T>(rankings: ReadonlyArray<readonly T[]>): T[] {
    const scores = new Map<T, number>();
    for (const ranking of rankings)
        ranking.forEach((item, index) => scores.set(item, (scores.get(item) ?? 0) + 1 / (rrfK + index + 1)));
    return [...scores.entries()]
        .map(([item, score], order) => ({item, score, order}))
        .sort((a, b) => b.score - a.score || a.order - b.order)
        .map(({item}) => item);
}
