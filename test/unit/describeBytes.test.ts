import {describe, expect, it} from "vitest";
import {describeBytes} from "../../src/core/node/documents/extraction/describeBytes.js";
import {readSource} from "../../src/core/node/documents/extraction/readSource.js";

describe("sizes as a person reads them", () => {
    it.each<[number, string]>([
        [0, "0 bytes"],
        [1, "1 byte"],
        [2, "2 bytes"],
        [1023, "1023 bytes"],
        [1024, "1 KB"],
        [1536, "1.5 KB"],
        [200 * 1024 ** 2, "200 MB"]
    ])("%i bytes: %s", (bytes, described) => {
        expect(describeBytes(bytes)).toBe(described);
    });

    it("a file over a one-byte limit is refused in words that read right", async () => {
        await expect(readSource({kind: "bytes", name: "note.txt", bytes: Buffer.from("hi")}, 1))
            .rejects.toThrow(/^note\.txt: is 2 bytes; the limit is 1 byte$/);
    });
});
