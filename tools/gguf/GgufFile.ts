import fs from "node:fs";

/**
 * A small GGUF (v3) reader and writer that keeps every metadata value's exact type, so a
 * file's tokenizer can be carried into a new model unchanged. Used to make synthetic models
 * (random weights, a real tokenizer) for benchmarks and bad-model tests; node-llama-cpp's own
 * reader is used everywhere else.
 */

export const enum GgufValueType {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12
}

export type GgufScalar = {type: Exclude<GgufValueType, GgufValueType.Array>, value: number | bigint | boolean | string};
export type GgufArray = {type: GgufValueType.Array, itemType: Exclude<GgufValueType, GgufValueType.Array>, items: Array<number | bigint | boolean | string>};
export type GgufValue = GgufScalar | GgufArray;

export type GgufTensor = {
    name: string,
    /** ne[0] first, as GGUF stores them. */
    dims: number[],
    /** ggml type id: 0 F32, 1 F16. */
    ggmlType: number,
    data: Buffer
};

const ggufMagic = 0x46554747; // "GGUF" little-endian
const alignment = 32;

export function readGgufMetadata(path: string): Map<string, GgufValue> {
    const buffer = fs.readFileSync(path);
    let offset = 0;
    const u32 = () => {
        const value = buffer.readUInt32LE(offset);
        offset += 4;
        return value;
    };
    const u64 = () => {
        const value = buffer.readBigUInt64LE(offset);
        offset += 8;
        return value;
    };
    const string = () => {
        const length = Number(u64());
        const value = buffer.toString("utf8", offset, offset + length);
        offset += length;
        return value;
    };
    const scalar = (type: GgufValueType): number | bigint | boolean | string => {
        switch (type) {
            case GgufValueType.U8: return buffer.readUInt8(offset++);
            case GgufValueType.I8: return buffer.readInt8(offset++);
            case GgufValueType.U16: offset += 2; return buffer.readUInt16LE(offset - 2);
            case GgufValueType.I16: offset += 2; return buffer.readInt16LE(offset - 2);
            case GgufValueType.U32: return u32();
            case GgufValueType.I32: offset += 4; return buffer.readInt32LE(offset - 4);
            case GgufValueType.F32: offset += 4; return buffer.readFloatLE(offset - 4);
            case GgufValueType.Bool: return buffer.readUInt8(offset++) !== 0;
            case GgufValueType.String: return string();
            case GgufValueType.U64: return u64();
            case GgufValueType.I64: offset += 8; return buffer.readBigInt64LE(offset - 8);
            case GgufValueType.F64: offset += 8; return buffer.readDoubleLE(offset - 8);
            default: throw new Error(`GGUF value type ${type} is not a scalar`);
        }
    };

    if (u32() !== ggufMagic)
        throw new Error(`${path} is not a GGUF file`);
    const version = u32();
    if (version !== 3)
        throw new Error(`GGUF version ${version}; this reader handles version 3`);
    u64(); // tensor count
    const kvCount = Number(u64());
    const metadata = new Map<string, GgufValue>();
    for (let index = 0; index < kvCount; index++) {
        const key = string();
        const type = u32() as GgufValueType;
        if (type === GgufValueType.Array) {
            const itemType = u32() as GgufArray["itemType"];
            const count = Number(u64());
            const items = Array.from({length: count}, () => scalar(itemType));
            metadata.set(key, {type, itemType, items});
        } else
            metadata.set(key, {type, value: scalar(type)} as GgufScalar);
    }
    return metadata;
}

/** Writes a GGUF v3 file: header, metadata, tensor infos, then 32-byte aligned tensor data. */
export function writeGguf(path: string, metadata: Map<string, GgufValue>, tensors: GgufTensor[]) {
    const parts: Buffer[] = [];
    const u32 = (value: number) => {
        const buffer = Buffer.alloc(4);
        buffer.writeUInt32LE(value);
        parts.push(buffer);
    };
    const u64 = (value: number | bigint) => {
        const buffer = Buffer.alloc(8);
        buffer.writeBigUInt64LE(BigInt(value));
        parts.push(buffer);
    };
    const string = (value: string) => {
        const bytes = Buffer.from(value, "utf8");
        u64(bytes.length);
        parts.push(bytes);
    };
    const scalar = (type: GgufValueType, value: number | bigint | boolean | string) => {
        const buffer = Buffer.alloc(8);
        switch (type) {
            case GgufValueType.U8: buffer.writeUInt8(Number(value)); parts.push(buffer.subarray(0, 1)); return;
            case GgufValueType.I8: buffer.writeInt8(Number(value)); parts.push(buffer.subarray(0, 1)); return;
            case GgufValueType.U16: buffer.writeUInt16LE(Number(value)); parts.push(buffer.subarray(0, 2)); return;
            case GgufValueType.I16: buffer.writeInt16LE(Number(value)); parts.push(buffer.subarray(0, 2)); return;
            case GgufValueType.U32: buffer.writeUInt32LE(Number(value)); parts.push(buffer.subarray(0, 4)); return;
            case GgufValueType.I32: buffer.writeInt32LE(Number(value)); parts.push(buffer.subarray(0, 4)); return;
            case GgufValueType.F32: buffer.writeFloatLE(Number(value)); parts.push(buffer.subarray(0, 4)); return;
            case GgufValueType.Bool: buffer.writeUInt8(value === true ? 1 : 0); parts.push(buffer.subarray(0, 1)); return;
            case GgufValueType.String: string(String(value)); return;
            case GgufValueType.U64: buffer.writeBigUInt64LE(BigInt(value)); parts.push(buffer); return;
            case GgufValueType.I64: buffer.writeBigInt64LE(BigInt(value)); parts.push(buffer); return;
            case GgufValueType.F64: buffer.writeDoubleLE(Number(value)); parts.push(buffer); return;
            default: throw new Error(`GGUF value type ${type} is not a scalar`);
        }
    };

    u32(ggufMagic);
    u32(3);
    u64(tensors.length);
    u64(metadata.size);
    for (const [key, value] of metadata) {
        string(key);
        u32(value.type);
        if (value.type === GgufValueType.Array) {
            u32(value.itemType);
            u64(value.items.length);
            for (const item of value.items)
                scalar(value.itemType, item);
        } else
            scalar(value.type, value.value);
    }

    let dataOffset = 0;
    const offsets: number[] = [];
    for (const tensor of tensors) {
        string(tensor.name);
        u32(tensor.dims.length);
        for (const dim of tensor.dims)
            u64(dim);
        u32(tensor.ggmlType);
        u64(dataOffset);
        offsets.push(dataOffset);
        dataOffset = alignUp(dataOffset + tensor.data.length, alignment);
    }

    const fd = fs.openSync(path, "w");
    try {
        let position = 0;
        for (const part of parts) {
            fs.writeSync(fd, part, 0, part.length, position);
            position += part.length;
        }
        const dataStart = alignUp(position, alignment);
        tensors.forEach((tensor, index) => fs.writeSync(fd, tensor.data, 0, tensor.data.length, dataStart + offsets[index]!));
        fs.ftruncateSync(fd, dataStart + dataOffset);
    } finally {
        fs.closeSync(fd);
    }
}

function alignUp(value: number, to: number) {
    return Math.ceil(value / to) * to;
}
