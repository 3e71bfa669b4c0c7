/**
 * Finds the chat template's stop texts in streamed output. Text that might be the start of a
 * stop text is held back until it is known not to be one, so a terminator is never shown.
 */
export class StopTextDetector {
    private readonly _stopTexts: string[];
    private _held = "";
    private _stopped = false;

    public constructor(stopTexts: string[]) {
        this._stopTexts = stopTexts.filter((stopText) => stopText.length > 0);
    }

    public push(piece: string): {emit: string, stopped: boolean} {
        if (this._stopped)
            return {emit: "", stopped: true};

        const buffer = this._held + piece;
        let cut = -1;
        for (const stopText of this._stopTexts) {
            const index = buffer.indexOf(stopText);
            if (index >= 0 && (cut < 0 || index < cut))
                cut = index;
        }
        if (cut >= 0) {
            this._stopped = true;
            this._held = "";
            return {emit: buffer.slice(0, cut), stopped: true};
        }

        let hold = 0;
        for (const stopText of this._stopTexts)
            for (let length = Math.min(stopText.length - 1, buffer.length); length > hold; length--)
                if (buffer.endsWith(stopText.slice(0, length))) {
                    hold = length;
                    break;
                }

        this._held = buffer.slice(buffer.length - hold);
        return {emit: buffer.slice(0, buffer.length - hold), stopped: false};
    }

    /** Releases held text at the end of a reply that did not stop on a stop text. */
    public flush() {
        const held = this._stopped ? "" : this._held;
        this._held = "";
        return held;
    }
}
