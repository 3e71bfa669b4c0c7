import fs from "node:fs";
import {GgmlType} from "node-llama-cpp";
import {ModelLoadError} from "../../common/errors.js";

/** Header facts learned by the bounded walk. */
export type GgufStructure = {
    version: number,
    tensorCount: number,
    kvCount: number,
    /** First byte after the tensor infos. */
    headerEnd: number,
    /** First byte of the tensor data (headerEnd rounded up to the alignment). */
    dataStart: number
};

const supportedVersions = [2, 3];
/** GGUF spec: keys are at most 65535 bytes; ggml's GGML_MAX_NAME is 64; GGML_MAX_DIMS is 4. */
const maxKeyBytes = 65_535;
const maxTensorNameBytes = 64;
const maxDims = 4;
const defaultAlignment = 32;
const stringType = 8;
const arrayType = 9;
const scalarSizes: ReadonlyMap<number, number> = new Map([[0, 1], [1, 1], [2, 2], [3, 2], [4, 4], [5, 4], [6, 4], [7, 1], [10, 8], [11, 8], [12, 8]]);
/** Smallest bytes one metadata entry / tensor info can take: key length + type + 1-byte value; name length + n_dims + 1 dim + type + offset. */
const minKvBytes = 8 + 4 + 1;
const minTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
/** No ggml type stores a weight in less than one bit, so a tensor cannot hold more elements than 8 per byte of the file. */
const maxElementsPerFileByte = 8;
const windowBytes = 1 << 20;
/** A weight of one of these types crashed the CPU backend (SIGSEGV) in fuzzing; no converter writes them. */
const integerTypes: ReadonlySet<number> = new Set([GgmlType.I8, GgmlType.I16, GgmlType.I32, GgmlType.I64, GgmlType.F64]);


/**
 * Walks a GGUF header with every count, length, type and offset checked against the file
 * before it is trusted, and refuses the file with a clear `MODEL_*` error at the first field
 * that cannot be right. This runs before node-llama-cpp's GGUF reader and llama.cpp see the
 * file: a length field of 2^40 makes that reader ask Node for a read past 2 GiB, which aborts
 * the process (a native assertion, not an exception), and a misaligned name length can keep
 * it parsing garbage for minutes.
 */
export function checkGgufStructure(modelPath: string, fileBytes: number): GgufStructure {
    const reader = new BoundedReader(modelPath, fileBytes);
    try {
        return walk(reader, modelPath, fileBytes);
    } finally {
        reader.close();
    }
}

function walk(reader: BoundedReader, modelPath: string, fileBytes: number): GgufStructure {
    const malformed = (what: string, extra: Record<string, number | string> = {}) =>
        new ModelLoadError("MODEL_NOT_GGUF", `The GGUF header is malformed: ${what}.`, {path: modelPath, offset: reader.position, ...extra});
    // A count or length larger than what is left: the file was cut, or that field is damaged; either way it cannot load.
    const cut = (what: string) =>
        new ModelLoadError("MODEL_TRUNCATED", `The model file is truncated or damaged: ${what}.`, {path: modelPath, offset: reader.position});
    const count = (name: string, value: bigint, minBytesEach: number) => {
        const room = BigInt(reader.remaining);
        if (value * BigInt(minBytesEach) > room)
            throw cut(`${name} is ${value}, but the ${room} bytes left in the file hold at most ${room / BigInt(minBytesEach)}`);
        return Number(value);
    };
    const skipString = (name: string, maxBytes?: number) => {
        const length = reader.u64();
        if (maxBytes != null && length > BigInt(maxBytes))
            throw malformed(`${name} declares ${length} bytes (at most ${maxBytes} allowed)`);
        if (length > BigInt(reader.remaining))
            throw cut(`${name} declares ${length} bytes, more than the ${reader.remaining} bytes left`);
        return Number(length);
    };

    reader.skip(4); // magic, checked by the caller
    const version = reader.u32();
    if (!supportedVersions.includes(version))
        throw new ModelLoadError("MODEL_NOT_GGUF", `GGUF version ${version} is not supported (this build reads versions ${supportedVersions.join(" and ")}).`, {path: modelPath, version});

    const tensorCount = count("the tensor count", reader.u64(), minTensorInfoBytes);
    const kvCount = count("the metadata entry count", reader.u64(), minKvBytes);

    let alignment = defaultAlignment;
    for (let entry = 0; entry < kvCount; entry++) {
        const keyBytes = skipString(`metadata key ${entry}`, maxKeyBytes);
        const key = printable(reader.text(keyBytes), `metadata key ${entry}`);
        const type = reader.u32();
        if (type === stringType)
            reader.skip(skipString(`the value of "${key}"`));
        else if (type === arrayType) {
            const elementType = reader.u32();
            const elementSize = scalarSizes.get(elementType);
            if (elementType !== stringType && elementSize == null)
                throw malformed(`"${key}" is an array of unknown type ${elementType}`);
            const elements = count(`the length of array "${key}"`, reader.u64(), elementSize ?? 8);
            if (elementType === stringType)
                for (let element = 0; element < elements; element++)
                    reader.skip(skipString(`element ${element} of "${key}"`));
            else
                reader.skip(elements * elementSize!);
        } else {
            const size = scalarSizes.get(type);
            if (size == null)
                throw malformed(`"${key}" has unknown value type ${type}`);
            if (key === "general.alignment" && type === 4) {
                alignment = reader.u32();
                if (alignment === 0 || (alignment & (alignment - 1)) !== 0)
                    throw malformed(`general.alignment is ${alignment}, not a power of two`);
            } else
                reader.skip(size);
        }
    }

    const tensors: Array<{name: string, offset: bigint}> = [];
    const names = new Set<string>();
    const maxElements = BigInt(fileBytes) * BigInt(maxElementsPerFileByte);
    for (let index = 0; index < tensorCount; index++) {
        const name = printable(reader.text(skipString(`the name of tensor ${index}`, maxTensorNameBytes)), `tensor ${index}`);
        if (names.has(name))
            throw malformed(`tensor "${name}" appears twice`);
        names.add(name);

        const nDims = reader.u32();
        if (nDims < 1 || nDims > maxDims)
            throw malformed(`tensor "${name}" has ${nDims} dimensions (1 to ${maxDims} allowed)`);
        let elements = 1n;
        for (let dim = 0; dim < nDims; dim++) {
            const size = reader.u64();
            if (size === 0n)
                throw malformed(`dimension ${dim} of tensor "${name}" is 0`);
            elements *= size;
            if (elements > maxElements)
                throw malformed(`tensor "${name}" declares more elements than the file can hold`);
        }
        const type = reader.u32();
        if (GgmlType[type] == null)
            throw malformed(`tensor "${name}" has unknown type ${type}`);
        // Converters and llama-quantize keep 1-D tensors (norms, biases) in F32; ggml's CPU element-wise ops
        // abort the process on any other type (F16 and quantized seen) at the first evaluation.
        if (integerTypes.has(type))
            throw malformed(`tensor "${name}" is stored as ${GgmlType[type]}; llama.cpp computes with float or quantized weights only`);
        if (nDims === 1 && type !== GgmlType.F32)
            throw malformed(`1-D tensor "${name}" is stored as ${GgmlType[type]}; norms and biases must be F32`);
        tensors.push({name, offset: reader.u64()});
    }

    const headerEnd = reader.position;
    const dataStart = Math.ceil(headerEnd / alignment) * alignment;
    for (const tensor of tensors) {
        if (tensor.offset % BigInt(alignment) !== 0n)
            throw malformed(`the data of tensor "${tensor.name}" starts at ${tensor.offset}, not a multiple of the alignment ${alignment}`);
        if (BigInt(dataStart) + tensor.offset >= BigInt(fileBytes))
            throw new ModelLoadError(
                "MODEL_TRUNCATED",
                `The model file is truncated or damaged: tensor "${tensor.name}" starts at byte ${BigInt(dataStart) + tensor.offset}, past its end.`,
                {path: modelPath}
            );
    }

    return {version, tensorCount, kvCount, headerEnd, dataStart};
}

/** A name as read from the file, fit for an error message: the name when it is short printable text, else a placeholder. */
function printable(name: string, placeholder: string) {
    return /^[\x20-\x7e]{1,80}$/.test(name) ? name : `(${placeholder}: unreadable name)`;
}

/** Sequential reads through a 1 MiB window; any read past the end is MODEL_TRUNCATED. */
class BoundedReader {
    private readonly _fd: number;
    private readonly _path: string;
    private readonly _fileBytes: number;
    private readonly _window = Buffer.alloc(windowBytes);
    private _windowStart = 0;
    private _windowEnd = 0;
    private _position = 0;

    public constructor(modelPath: string, fileBytes: number) {
        this._fd = fs.openSync(modelPath, "r");
        this._path = modelPath;
        this._fileBytes = fileBytes;
    }

    public get position() {
        return this._position;
    }

    public get remaining() {
        return this._fileBytes - this._position;
    }

    public skip(bytes: number) {
        this._ensureInFile(bytes);
        this._position += bytes;
    }

    public u32() {
        const at = this._at(4);
        return this._window.readUInt32LE(at);
    }

    public u64() {
        const at = this._at(8);
        return this._window.readBigUInt64LE(at);
    }

    public text(bytes: number) {
        const at = this._at(bytes);
        return this._window.toString("utf8", at, at + bytes);
    }

    public close() {
        fs.closeSync(this._fd);
    }

    /** Makes [position, position + bytes) readable from the window (bytes <= window size), advances, returns its window offset. */
    private _at(bytes: number) {
        this._ensureInFile(bytes);
        if (this._position < this._windowStart || this._position + bytes > this._windowEnd) {
            this._windowStart = this._position;
            this._windowEnd = this._position + fs.readSync(this._fd, this._window, 0, Math.min(windowBytes, this._fileBytes - this._position), this._position);
        }
        const at = this._position - this._windowStart;
        this._position += bytes;
        return at;
    }

    private _ensureInFile(bytes: number) {
        if (this._position + bytes > this._fileBytes)
            throw new ModelLoadError(
                "MODEL_TRUNCATED",
                `The model file ends inside its own header (byte ${this._position + bytes} needed): it is truncated or damaged.`,
                {path: this._path}
            );
    }
}
