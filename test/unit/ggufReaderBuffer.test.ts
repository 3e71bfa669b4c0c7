import path from "node:path";
import {readGgufFileInfo} from "node-llama-cpp";
import {afterEach, describe, expect, it, vi} from "vitest";
import {ggufReaderBufferPatched} from "../../src/core/node/engine/ggufReaderBuffer.js";
import {GgufValueType, writeGguf, type GgufValue} from "../../tools/gguf/GgufFile.js";
import {tempDir} from "../helpers/tempCore.js";

/** A GGUF whose metadata alone is `megabytes` long (one array of strings), so that reading it takes several of the reader's 4 MB reads. */
function ggufWithLongMetadata(megabytes: number) {
    const file = path.join(tempDir("gguf-reader"), `long-${megabytes}.gguf`);
    const items = Array.from({length: megabytes * 1024}, (_, index) => `${index}:`.padEnd(1016, String.fromCharCode(97 + index % 26)));
    const metadata = new Map<string, GgufValue>([
        ["general.architecture", {type: GgufValueType.String, value: "llama"}],
        ["general.name", {type: GgufValueType.String, value: "long metadata"}],
        ["test.strings", {type: GgufValueType.Array, itemType: GgufValueType.String, items}],
        ["test.after", {type: GgufValueType.U32, value: 4_242}]
    ]);
    writeGguf(file, metadata, [{name: "token_embd.weight", dims: [4, 2], ggmlType: 0, data: Buffer.alloc(32)}]);
    return {file, items};
}

describe("node-llama-cpp's GGUF reader, grown without copying its first read", () => {
    afterEach(() => {
        vi.restoreAllMocks();
    });

    it("is patched where the engine loads llama.cpp", () => {
        expect(ggufReaderBufferPatched).toBe(true);
    });

    it("reads a small file's header with no copy of what it read", async () => {
        const {file} = ggufWithLongMetadata(1);
        const copy = vi.spyOn(Buffer.prototype, "copy");
        const info = await readGgufFileInfo(file, {sourceType: "filesystem", logWarnings: false});
        expect(copy).not.toHaveBeenCalled();
        expect(info.metadata.general.name).toBe("long metadata");
    });

    it("reads metadata that spans several reads whole and in order", async () => {
        const {file, items} = ggufWithLongMetadata(11);
        const info = await readGgufFileInfo(file, {sourceType: "filesystem", logWarnings: false});
        const {strings, after} = (info.metadata as unknown as {test: {strings: string[], after: number}}).test;
        expect(strings).toHaveLength(items.length);
        expect(strings).toEqual(items);
        expect(after).toBe(4_242);
        expect(info.tensorInfo?.map((tensor) => tensor.name)).toEqual(["token_embd.weight"]);
    });
});
