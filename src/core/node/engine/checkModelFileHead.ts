import fs from "node:fs";
import {ModelLoadError} from "../../common/errors.js";

const ggufMagic = Buffer.from("GGUF", "ascii");

/**
 * The first check of a model file, cheap enough to make before llama.cpp is loaded: a readable
 * regular file that starts with the GGUF magic, else `MODEL_NOT_FOUND` or `MODEL_NOT_GGUF`. Returns
 * the file's stat for `validateModelFile`'s deeper checks.
 *
 * One answer for every path that gives no readable file (missing, a folder, a FIFO, no permission,
 * a link loop…): the error never tells whether an arbitrary path exists. O_NONBLOCK: a FIFO never
 * blocks the open. No message or detail gives the size of a file that is not a valid model.
 */
export function checkModelFileHead(modelPath: string): fs.Stats {
    const notReadable = () => new ModelLoadError("MODEL_NOT_FOUND", `No model file at ${modelPath}: not found or not readable.`, {path: modelPath});
    let fd: number;
    try {
        fd = fs.openSync(modelPath, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    } catch {
        throw notReadable();
    }
    let stat: fs.Stats;
    const head = Buffer.alloc(ggufMagic.length);
    let headBytes = 0;
    try {
        stat = fs.fstatSync(fd);
        if (!stat.isFile())
            throw notReadable();
        headBytes = fs.readSync(fd, head, 0, head.length, 0);
    } catch (error) {
        throw error instanceof ModelLoadError ? error : notReadable();
    } finally {
        fs.closeSync(fd);
    }
    if (headBytes < ggufMagic.length || !head.equals(ggufMagic))
        throw new ModelLoadError("MODEL_NOT_GGUF", `Not a GGUF model (the file does not start with "GGUF"): ${modelPath}`, {path: modelPath});
    return stat;
}
