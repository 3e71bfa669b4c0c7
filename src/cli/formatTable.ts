export type TableColumn = {
    header: string,
    /** Numbers read best right-aligned. Defaults to `"left"`. */
    align?: "left" | "right"
};

/** Space between columns. */
const gap = "  ";

/**
 * A table for the terminal: a header row, then one row per entry, every column as wide as its
 * widest cell. The last column is not padded, so lines carry no trailing spaces; `indent`
 * goes before every line.
 */
export function formatTable(columns: readonly TableColumn[], rows: ReadonlyArray<readonly string[]>, {indent = ""}: {indent?: string} = {}): string {
    const width = (text: string) => [...text].length;
    const widths = columns.map((column, index) => Math.max(width(column.header), ...rows.map((row) => width(row[index] ?? ""))));
    const line = (cells: readonly string[]) => indent + columns.map((column, index) => {
        const cell = cells[index] ?? "";
        const padding = " ".repeat(widths[index]! - width(cell));
        if (column.align === "right")
            return padding + cell;
        return index === columns.length - 1 ? cell : cell + padding;
    }).join(gap).trimEnd() + "\n";
    return line(columns.map((column) => column.header)) + rows.map(line).join("");
}
