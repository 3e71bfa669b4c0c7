import type {GgufField, GgufLayout} from "./ggufLayout.js";
import {SeededRandom} from "./seededRandom.js";

export type MutationKind =
    | "truncate-header" | "truncate-data" | "flip-header-bytes" | "version"
    | "tensor-count" | "kv-count" | "key-length" | "string-length" | "value-type"
    | "array-type" | "array-count" | "tensor-name-length" | "tensor-n-dims" | "tensor-dim"
    | "tensor-type" | "tensor-offset" | "hyperparameter";

export type ModelMutant = {
    index: number,
    kind: MutationKind,
    /** What was changed, in words: enough to rebuild the mutant by hand. */
    detail: string,
    bytes: Buffer
};

const kinds: readonly MutationKind[] = [
    "truncate-header", "truncate-data", "flip-header-bytes", "flip-header-bytes", "version",
    "tensor-count", "kv-count", "key-length", "string-length", "value-type", "array-type", "array-count",
    "tensor-name-length", "tensor-n-dims", "tensor-dim", "tensor-dim", "tensor-type", "tensor-offset",
    "hyperparameter", "hyperparameter", "hyperparameter"
];

/** Values that break code which trusts a count or a size. */
const absurd64: readonly bigint[] = [
    0n, 1n, 2n ** 16n, 2n ** 31n - 1n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 32n + 1n,
    2n ** 48n, 2n ** 62n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n
];
const absurd32: readonly number[] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 255, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF];

/** The seed of one mutant: independent of the others, so any index can be rebuilt alone. */
export function mutantSeed(runSeed: number, index: number) {
    return (runSeed ^ Math.imul(index + 1, 0x9E3779B1)) >>> 0;
}

/**
 * Mutant `index` of the model under run seed `runSeed`: truncations, byte flips in the header,
 * or one header field (counts, lengths, types, tensor dims/types/offsets, hyperparameters) set
 * to a value that is off by one or absurd. Deterministic in (runSeed, index).
 */
export function makeModelMutant(original: Buffer, layout: GgufLayout, runSeed: number, index: number): ModelMutant {
    const random = new SeededRandom(mutantSeed(runSeed, index));
    const kind = random.pick(kinds);
    const bytes = Buffer.from(original);
    const result = (detail: string, data: Buffer = bytes): ModelMutant => ({index, kind, detail, bytes: data});

    const setU64 = (field: GgufField, value: bigint) => bytes.writeBigUInt64LE(BigInt.asUintN(64, value), field.offset);
    const setU32 = (field: GgufField, value: number) => bytes.writeUInt32LE(value >>> 0, field.offset);
    const u64 = (field: GgufField) => bytes.readBigUInt64LE(field.offset);
    const u32 = (field: GgufField) => bytes.readUInt32LE(field.offset);
    const near64 = (current: bigint) => random.chance(0.5)
        ? random.pick(absurd64)
        : BigInt.asUintN(64, current + BigInt(random.pick([-2, -1, 1, 2, 1000])));
    const near32 = (current: number) => random.chance(0.5)
        ? random.pick(absurd32)
        : (current + random.pick([-2, -1, 1, 2, 1000])) >>> 0;
    const edit64 = (name: string, field: GgufField) => {
        const before = u64(field);
        const after = near64(before);
        setU64(field, after);
        return result(`${name} ${before} -> ${after} (u64 at ${field.offset})`);
    };
    const edit32 = (name: string, field: GgufField) => {
        const before = u32(field);
        const after = near32(before);
        setU32(field, after);
        return result(`${name} ${before} -> ${after} (u32 at ${field.offset})`);
    };

    switch (kind) {
        case "truncate-header": {
            const at = random.int(0, layout.headerEnd + 64);
            return result(`cut at byte ${at} of ${original.length} (header ends at ${layout.headerEnd})`, original.subarray(0, at));
        }
        case "truncate-data": {
            const at = random.int(layout.headerEnd + 64, original.length);
            return result(`cut at byte ${at} of ${original.length}`, original.subarray(0, at));
        }
        case "flip-header-bytes": {
            const flips = random.int(1, 9);
            const changed: string[] = [];
            for (let flip = 0; flip < flips; flip++) {
                const at = random.int(4, layout.headerEnd);
                const mask = random.int(1, 256);
                bytes[at] = bytes[at]! ^ mask;
                changed.push(`${at}^0x${mask.toString(16)}`);
            }
            return result(`flipped ${changed.join(", ")}`);
        }
        case "version":
            return edit32("version", layout.versionField);
        case "tensor-count":
            return edit64("tensor_count", layout.tensorCount);
        case "kv-count":
            return edit64("kv_count", layout.kvCount);
        case "key-length": {
            const kv = random.pick(layout.kvs);
            return edit64(`key length of ${kv.key}`, kv.keyLength);
        }
        case "string-length": {
            const kv = random.pick(layout.kvs.filter((entry) => entry.stringLength != null));
            return edit64(`string length of ${kv.key}`, kv.stringLength!);
        }
        case "value-type": {
            const kv = random.pick(layout.kvs);
            return edit32(`value type of ${kv.key}`, kv.valueType);
        }
        case "array-type": {
            const kv = random.pick(layout.kvs.filter((entry) => entry.arrayType != null));
            return edit32(`array element type of ${kv.key}`, kv.arrayType!);
        }
        case "array-count": {
            const kv = random.pick(layout.kvs.filter((entry) => entry.arrayCount != null));
            return edit64(`array count of ${kv.key}`, kv.arrayCount!);
        }
        case "tensor-name-length": {
            const tensor = random.pick(layout.tensors);
            return edit64(`name length of tensor ${tensor.name}`, tensor.nameLength);
        }
        case "tensor-n-dims": {
            const tensor = random.pick(layout.tensors);
            return edit32(`n_dims of tensor ${tensor.name}`, tensor.nDims);
        }
        case "tensor-dim": {
            const tensor = random.pick(layout.tensors);
            const dim = random.int(0, tensor.dims.length);
            if (random.chance(0.3)) {
                const before = u64(tensor.dims[dim]!);
                const after = before * BigInt(random.pick([2, 4, 1024]));
                setU64(tensor.dims[dim]!, after);
                return result(`dim ${dim} of tensor ${tensor.name} ${before} -> ${after} (scaled)`);
            }
            return edit64(`dim ${dim} of tensor ${tensor.name}`, tensor.dims[dim]!);
        }
        case "tensor-type": {
            const tensor = random.pick(layout.tensors);
            if (random.chance(0.6)) {
                const before = u32(tensor.type);
                const after = random.int(0, 46); // every ggml type, and a few past the end
                setU32(tensor.type, after);
                return result(`type of tensor ${tensor.name} ${before} -> ${after}`);
            }
            return edit32(`type of tensor ${tensor.name}`, tensor.type);
        }
        case "tensor-offset": {
            const tensor = random.pick(layout.tensors);
            if (random.chance(0.4)) {
                const other = random.pick(layout.tensors);
                const before = u64(tensor.offset);
                const after = u64(other.offset) + BigInt(random.pick([0, 1, 32]));
                setU64(tensor.offset, after);
                return result(`offset of tensor ${tensor.name} ${before} -> ${after} (onto ${other.name})`);
            }
            return edit64(`offset of tensor ${tensor.name}`, tensor.offset);
        }
        case "hyperparameter": {
            const kv = random.pick(layout.kvs.filter((entry) => entry.valueType_ === 4 || entry.valueType_ === 6));
            if (kv.valueType_ === 6) {
                const before = bytes.readFloatLE(kv.value.offset);
                const after = random.pick([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e30, -1e-30]);
                bytes.writeFloatLE(after, kv.value.offset);
                return result(`${kv.key} ${before} -> ${after} (f32 at ${kv.value.offset})`);
            }
            return edit32(kv.key, kv.value);
        }
    }
}
