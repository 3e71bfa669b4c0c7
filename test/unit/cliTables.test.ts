import {describe, expect, it} from "vitest";
import {formatTable} from "../../src/cli/formatTable.js";
import {formatBytes} from "../../src/core/common/formatBytes.js";
import {formatBytes as rendererFormatBytes} from "../../renderer/src/format.js";

describe("what the CLI prints for people", () => {
    it("tables: a header, every column as wide as its widest cell, numbers right-aligned, no trailing spaces", () => {
        const table = formatTable([{header: "ID"}, {header: "MESSAGES", align: "right"}, {header: "TITLE"}], [
            ["a", "4", "Short"],
            ["a-much-longer-id", "1200", "A title with spaces"]
        ], {indent: "  "});
        expect(table).toBe(
            "  ID                MESSAGES  TITLE\n" +
            "  a                        4  Short\n" +
            "  a-much-longer-id      1200  A title with spaces\n"
        );
    });

    it("sizes in binary units, with the one formatter the app's renderer uses", () => {
        expect(rendererFormatBytes).toBe(formatBytes);
        expect(formatBytes(512)).toBe("512 B");
        expect(formatBytes(1536)).toBe("1.5 KiB");
        expect(formatBytes(1_185_376)).toBe("1.1 MiB");
        expect(formatBytes(807_694_464)).toBe("770 MiB");
        expect(formatBytes(4.68e9)).toBe("4.4 GiB");
    });
});
