import {describe, expect, it} from "vitest";
import {classifyText} from "../../src/core/node/documents/extraction/classifyText.js";
import {decodeText} from "../../src/core/node/documents/extraction/decodeText.js";
import {AttachmentUnreadableError} from "../../src/core/node/documents/extraction/types.js";

/** How a text attachment is decoded and labelled: in the core's process, by content alone. */
describe("document text: encodings and formats by content", () => {
    const text = "Überweisung an José: 12 € — fällig\n";

    it.each([
        ["UTF-8", Buffer.from(text, "utf8"), "utf-8"],
        ["UTF-8 with a byte order mark", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]), "utf-8"],
        ["UTF-16LE without a mark", Buffer.from(text, "utf16le"), "utf-16le"],
        ["UTF-16BE without a mark", Buffer.from(text, "utf16le").swap16(), "utf-16be"],
        ["UTF-16BE with a mark", Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, "utf16le").swap16()]), "utf-16be"]
    ])("%s decodes to the same text, the mark dropped", (_label, bytes, encoding) => {
        expect(decodeText("note.txt", bytes)).toEqual({text, encoding});
    });

    it("line endings become \\n, and a log with colour escapes is still text", () => {
        expect(decodeText("build.log", Buffer.from("\u001b[32mok\u001b[0m\r\nnext\rlast")).text).toBe("\u001b[32mok\u001b[0m\nnext\nlast");
    });

    it.each([
        ["Latin-1 (not valid UTF-8)", "menu.txt", Buffer.from("caf\xe9 cr\xe8me", "latin1"), "menu.txt: looks like a binary file: it is not valid UTF-8 text"],
        ["a NUL in UTF-8", "data.txt", Buffer.from("PK\u0003\u0004\u0000\u0000abc"), "data.txt: looks like a binary file, not text or a document Cleanroom reads (PDF, DOCX, HTML, text or source code)"],
        ["control characters", "data.txt", Buffer.from("\u0001\u0002\u0003\u0004 text \u0005\u0006"), "data.txt: looks like a binary file: it is full of control characters"]
    ])("%s is refused as binary", (_label, name, bytes, message) => {
        let refused: unknown = null;
        try {
            decodeText(name, bytes);
        } catch (error) {
            refused = error;
        }
        expect(refused).toBeInstanceOf(AttachmentUnreadableError);
        expect(refused).toMatchObject({reason: "binary", message});
    });

    it.each([
        ["<!-- saved page -->\n<!DOCTYPE html><html><body>Hi</body></html>", "html"],
        ["<html lang=\"en\"><p>Hi</p></html>", "html"],
        ["#!/bin/sh\necho hello\n", "code"],
        ["def main():\n    print('hi')\n\nif __name__ == '__main__':\n    main()\n", "code"],
        ["#include <stdio.h>\nint main(void) {\n    return 0;\n}\n", "code"],
        ["# Title\n\nSome words with a [link](https://example.invalid).\n", "markdown"],
        ["Shopping list\n- milk\n- bread\n", "markdown"],
        ["Dear Ann,\nthe meeting moved to Friday, at ten.\nBest,\nBo\n", "text"],
        ["   \n\n", "text"]
    ])("%j is %s", (content, format) => {
        expect(classifyText(content)).toBe(format);
    });
});
