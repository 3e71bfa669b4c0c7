import fs from "node:fs/promises";

/** Errors in a sequence state file: what the engine saved is not what the parser expects. */
export class KvStateFormatError extends Error {
    public constructor(message: string) {
        super(`Unexpected KV state file: ${message}`);
        this.name = "KvStateFormatError";
    }
}

export const chunkBytes = 1 << 20;

/** Streams through a file in chunks; every read is bounds-checked. */
export class ChunkedReader {
    private readonly _file: fs.FileHandle;
    private readonly _size: number;
    private _buffer = Buffer.alloc(0);
    private _bufferStart = 0;
    private _offset = 0;
    private _disposed = false;

    private constructor(file: fs.FileHandle, size: number) {
        this._file = file;
        this._size = size;
    }

    public static async open(path: string) {
        const file = await fs.open(path, "r");
        const {size} = await file.stat();
        return new ChunkedReader(file, size);
    }

    public get offset() {
        return this._offset;
    }

    public get remaining() {
        return this._size - this._offset;
    }

    /** Closes the file; runs once. */
    public async dispose() {
        if (this._disposed)
            return;
        this._disposed = true;
        await this._file.close();
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    public async u32() {
        return (await this._take(4)).readUInt32LE(0);
    }

    public async i32() {
        return (await this._take(4)).readInt32LE(0);
    }

    public async u64() {
        const value = (await this._take(8)).readBigUInt64LE(0);
        if (value > BigInt(Number.MAX_SAFE_INTEGER))
            throw new KvStateFormatError(`a 64-bit size ${value} is out of range`);

        return Number(value);
    }

    /** The next `bytes` bytes. */
    public async take(bytes: number) {
        return await this._take(bytes);
    }

    /**
     * The next `bytes` bytes when they are in the buffer already, without an await; else null (then
     * `take` them). A state lists thousands of cells of a few bytes each: read one await at a time,
     * their fields cost more than the megabytes of K and V after them.
     */
    public takeBuffered(bytes: number): Buffer | null {
        this._ensureAvailable(bytes);
        const start = this._offset - this._bufferStart;
        if (this._offset < this._bufferStart || start + bytes > this._buffer.length)
            return null;
        this._offset += bytes;
        return this._buffer.subarray(start, start + bytes);
    }

    public async skip(bytes: number) {
        this._ensureAvailable(bytes);
        this._offset += bytes;
    }

    /** Reads `bytes` bytes and counts those that are not zero. */
    public async countNonZero(bytes: number) {
        this._ensureAvailable(bytes);
        let nonZero = 0;
        let left = bytes;
        const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1, bytes)));
        while (left > 0) {
            const length = Math.min(buffer.length, left);
            const {bytesRead} = await this._file.read(buffer, 0, length, this._offset);
            if (bytesRead !== length)
                throw new KvStateFormatError(`short read at byte ${this._offset}`);

            nonZero += countNonZeroBytes(buffer, length);
            this._offset += length;
            left -= length;
        }
        return nonZero;
    }

    private _ensureAvailable(bytes: number) {
        if (!Number.isSafeInteger(bytes) || bytes < 0 || this._offset + bytes > this._size)
            throw new KvStateFormatError(`needs ${bytes} more bytes at byte ${this._offset}, the file has ${this._size}`);
    }

    private async _take(bytes: number) {
        this._ensureAvailable(bytes);
        const end = this._offset + bytes;
        if (this._offset < this._bufferStart || end > this._bufferStart + this._buffer.length) {
            const length = Math.min(chunkBytes, this._size - this._offset);
            const buffer = Buffer.allocUnsafe(length);
            const {bytesRead} = await this._file.read(buffer, 0, length, this._offset);
            this._buffer = buffer.subarray(0, bytesRead);
            this._bufferStart = this._offset;
        }
        const start = this._offset - this._bufferStart;
        this._offset = end;
        return this._buffer.subarray(start, start + bytes);
    }
}

/** Compared against in one native call: a scrubbed cache reads back as nothing but zeros. */
const zeroChunk = Buffer.alloc(chunkBytes);

function countNonZeroBytes(buffer: Buffer, length: number) {
    if (length <= zeroChunk.length && buffer.subarray(0, length).equals(zeroChunk.subarray(0, length)))
        return 0;
    let nonZero = 0;
    // Whole 8-byte words, then each byte of a word that is not zero.
    const words = Math.floor(length / 8);
    for (let i = 0; i < words; i++) {
        if (buffer.readBigUInt64LE(i * 8) !== 0n) {
            for (let j = i * 8; j < i * 8 + 8; j++)
                if (buffer[j] !== 0)
                    nonZero++;
        }
    }
    for (let i = words * 8; i < length; i++)
        if (buffer[i] !== 0)
            nonZero++;

    return nonZero;
}


/** Writes a file front to back; a payload may be left as a hole (it reads as zeros, and costs no writing). */
export class ChunkedWriter {
    private readonly _file: fs.FileHandle;
    private readonly _sparse: boolean;
    private _position = 0;
    private _disposed = false;

    private constructor(file: fs.FileHandle, sparse: boolean) {
        this._file = file;
        this._sparse = sparse;
    }

    /** A new private file (`wx`, mode 0600); `sparse`: `zeros` leaves holes. */
    public static async create(path: string, sparse: boolean) {
        return new ChunkedWriter(await fs.open(path, "wx", 0o600), sparse);
    }

    public async bytes(buffer: Buffer) {
        await this._file.write(buffer, 0, buffer.length, this._position);
        this._position += buffer.length;
    }

    public async u32(...values: number[]) {
        const buffer = Buffer.alloc(4 * values.length);
        values.forEach((value, index) => buffer.writeUInt32LE(value, index * 4));
        await this.bytes(buffer);
    }

    public async i32(value: number) {
        const buffer = Buffer.alloc(4);
        buffer.writeInt32LE(value);
        await this.bytes(buffer);
    }

    public async u64(value: number) {
        const buffer = Buffer.alloc(8);
        buffer.writeBigUInt64LE(BigInt(value));
        await this.bytes(buffer);
    }

    public async zeros(bytes: number) {
        if (this._sparse) {
            this._position += bytes;
            return;
        }
        let left = bytes;
        while (left > 0) {
            const length = Math.min(left, zeroChunk.length);
            await this._file.write(zeroChunk, 0, length, this._position);
            this._position += length;
            left -= length;
        }
    }

    /** Sets the file's length (a sparse payload ends in a hole) and closes it; runs once. */
    public async dispose() {
        if (this._disposed)
            return;
        this._disposed = true;
        try {
            await this._file.truncate(this._position);
        } finally {
            await this._file.close();
        }
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }
}
