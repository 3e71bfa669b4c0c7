/**
 * Puts redacted values back into a reply where the model repeats their placeholders
 * (`[AWS access key 1]`), also while it streams: a piece that may be the start of a placeholder
 * is held until it is known to be one or not.
 */
export class PlaceholderRestorer {
    private readonly _values: ReadonlyMap<string, string>;
    private readonly _pattern: RegExp | null;
    private _held = "";

    /** @param values each placeholder and the value it stands for */
    public constructor(values: ReadonlyMap<string, string>) {
        this._values = values;
        const placeholders = [...values.keys()].sort((a, b) => b.length - a.length);
        this._pattern = placeholders.length > 0 ? new RegExp(placeholders.map((placeholder) => placeholder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g") : null;
    }

    /** Every placeholder in a whole text replaced by its value. */
    public restore(text: string): string {
        return this._pattern == null ? text : text.replace(this._pattern, (placeholder) => this._values.get(placeholder)!);
    }

    /** The next piece of a streamed reply: returns what can be shown now, restored. */
    public feed(piece: string): string {
        const text = this._held + piece;
        const open = text.lastIndexOf("[");
        const tail = open >= 0 ? text.slice(open) : "";
        const mayBePlaceholder = tail !== "" && [...this._values.keys()].some((placeholder) => placeholder.startsWith(tail) && placeholder !== tail);
        this._held = mayBePlaceholder ? tail : "";
        return this.restore(mayBePlaceholder ? text.slice(0, open) : text);
    }

    /** The end of the stream: what was held, restored. */
    public finish(): string {
        const rest = this.restore(this._held);
        this._held = "";
        return rest;
    }
}
