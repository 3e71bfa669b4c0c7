/**
 * Where each field of a GGUF (v2/v3) header sits in the file, so a fuzzer can aim its
 * mutations at real fields instead of random bytes. Parses only; never trusts a length it
 * cannot fit in the buffer.
 */
export type GgufField = {
    /** Byte offset of the field in the file. */
    offset: number,
    /** Bytes the field occupies. */
    size: number
};

export type GgufKvLayout = {
    key: string,
    keyLength: GgufField,
    valueType: GgufField,
    valueType_: number,
    /** For strings: the u64 length. For arrays: the element type (u32) and count (u64). */
    stringLength?: GgufField,
    arrayType?: GgufField,
    arrayCount?: GgufField,
    value: GgufField
};

export type GgufTensorLayout = {
    name: string,
    nameLength: GgufField,
    nDims: GgufField,
    dims: GgufField[],
    type: GgufField,
    offset: GgufField
};

export type GgufLayout = {
    version: number,
    versionField: GgufField,
    tensorCount: GgufField,
    kvCount: GgufField,
    kvs: GgufKvLayout[],
    tensors: GgufTensorLayout[],
    /** First byte after the tensor infos (before alignment padding). */
    headerEnd: number
};

const scalarSizes: Record<number, number> = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8};
const stringType = 8;
const arrayType = 9;

export function parseGgufLayout(file: Buffer): GgufLayout {
    let at = 0;
    const need = (bytes: number) => {
        if (at + bytes > file.length)
            throw new RangeError(`GGUF layout: needs ${bytes} bytes at ${at}, file has ${file.length}`);
    };
    const field = (size: number): GgufField => {
        need(size);
        const result = {offset: at, size};
        at += size;
        return result;
    };
    const u32 = (f: GgufField) => file.readUInt32LE(f.offset);
    const u64 = (f: GgufField) => Number(file.readBigUInt64LE(f.offset));
    const readString = () => {
        const length = field(8);
        const bytes = u64(length);
        const value = field(bytes);
        return {length, value, text: file.toString("utf8", value.offset, value.offset + value.size)};
    };

    if (file.toString("ascii", 0, 4) !== "GGUF")
        throw new Error("GGUF layout: bad magic");
    at = 4;
    const versionField = field(4);
    const tensorCount = field(8);
    const kvCount = field(8);

    const kvs: GgufKvLayout[] = [];
    for (let index = 0; index < u64(kvCount); index++) {
        const key = readString();
        const valueType = field(4);
        const type = u32(valueType);
        const entry: GgufKvLayout = {key: key.text, keyLength: key.length, valueType, valueType_: type, value: {offset: at, size: 0}};
        if (type === stringType) {
            const text = readString();
            entry.stringLength = text.length;
            entry.value = text.value;
        } else if (type === arrayType) {
            entry.arrayType = field(4);
            entry.arrayCount = field(8);
            const elementType = u32(entry.arrayType);
            const count = u64(entry.arrayCount);
            const start = at;
            if (elementType === stringType)
                for (let element = 0; element < count; element++)
                    readString();
            else {
                const size = scalarSizes[elementType];
                if (size == null)
                    throw new Error(`GGUF layout: array of unknown type ${elementType}`);
                field(size * count);
            }
            entry.value = {offset: start, size: at - start};
        } else {
            const size = scalarSizes[type];
            if (size == null)
                throw new Error(`GGUF layout: unknown value type ${type}`);
            entry.value = field(size);
        }
        kvs.push(entry);
    }

    const tensors: GgufTensorLayout[] = [];
    for (let index = 0; index < u64(tensorCount); index++) {
        const name = readString();
        const nDims = field(4);
        const dims = Array.from({length: u32(nDims)}, () => field(8));
        tensors.push({name: name.text, nameLength: name.length, nDims, dims, type: field(4), offset: field(8)});
    }

    return {version: u32(versionField), versionField, tensorCount, kvCount, kvs, tensors, headerEnd: at};
}
