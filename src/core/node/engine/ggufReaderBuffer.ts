// node-llama-cpp's GGUF readers keep what they have read in one buffer and grow it by whole reads of 4 MB or more. Its
// `_addToBuffer` allocates a zero-filled buffer of the new size and copies both parts into it, also for the first read,
// when there is nothing to keep: a model's header (read twice per load, by validateModelFile and by loadModel) cost a
// 4 MB allocation, fill and copy each time, about 20 ms here (45 ms a load, in every process that loads a model).
// Its module is not among the package's exports, so it is reached by its file: the same module node-llama-cpp uses,
// in Node and in the compiled bundle alike. unit/ggufReaderBuffer.test.ts fails if the method moves or changes shape.
import {GgufFileReader} from "../../../../node_modules/node-llama-cpp/dist/gguf/fileReaders/GgufFileReader.js";

type ReaderInternals = {_buffer: Buffer, _addToBuffer(buffer: Buffer): void};

const patched = Symbol.for("cleanroom.ggufReaderBuffer");
const prototype = GgufFileReader.prototype as unknown as ReaderInternals & {[patched]?: true};

/**
 * The buffer a reader has read so far, grown without the needless copy: the first read becomes the buffer itself (each
 * read is a fresh buffer of the reader's own, so nothing else holds it), and a later one is appended into a buffer
 * that both copies fill whole, so it need not be zeroed first.
 */
function addToBuffer(this: ReaderInternals, buffer: Buffer) {
    if (this._buffer.byteLength === 0) {
        this._buffer = buffer;
        return;
    }
    const grown = Buffer.allocUnsafe(this._buffer.byteLength + buffer.byteLength);
    this._buffer.copy(grown, 0);
    buffer.copy(grown, this._buffer.byteLength);
    this._buffer = grown;
}

if (prototype[patched] !== true) {
    if (typeof prototype._addToBuffer !== "function")
        throw new Error("node-llama-cpp's GgufFileReader has no _addToBuffer any more: see src/core/node/engine/ggufReaderBuffer.ts");
    prototype._addToBuffer = addToBuffer;
    prototype[patched] = true;
}

/** Whether node-llama-cpp's GGUF readers grow their buffer this module's way (imported first for its effect). */
export const ggufReaderBufferPatched = prototype[patched] === true;
