import {formatDuration} from "./formatDuration.js";
import {renderProgressBar} from "./renderProgressBar.js";

/** Where progress goes: stderr, or a stand-in in tests. */
export type ProgressStream = {
    write(text: string): unknown,
    /** A terminal gets one line redrawn in place; anything else one plain line per step. */
    readonly isTTY?: boolean
};

export type StepProgressOptions = {
    /** What is being done, first on the line: "audit". */
    label: string,
    /** Steps in all. */
    total: number,
    /** What a step is, in the plural: "requests". */
    unit: string,
    /** For tests. Defaults to `performance.now`. */
    now?: () => number
};

/** Clears from the cursor to the end of the line. */
const clearToEnd = "\x1b[K";

/**
 * Progress of a counted task. On a terminal: a bar with the count, percentage and elapsed time,
 * one line redrawn in place and ended by `finish()`. Elsewhere (a pipe, a log file): one plain
 * line per step, never run together.
 */
export class StepProgress {
    private readonly _stream: ProgressStream;
    private readonly _options: StepProgressOptions;
    private readonly _now: () => number;
    private readonly _started: number;
    private _drawn = false;

    public constructor(stream: ProgressStream, options: StepProgressOptions) {
        this._stream = stream;
        this._options = options;
        this._now = options.now ?? (() => performance.now());
        this._started = this._now();
    }

    /** Reports that `done` of the steps are finished. */
    public update(done: number) {
        const {label, total, unit} = this._options;
        const elapsed = formatDuration((this._now() - this._started) / 1000);
        const percent = total > 0 ? Math.floor(100 * done / total) : 100;
        if (this._stream.isTTY === true) {
            this._stream.write(`\r${label} ${renderProgressBar(total > 0 ? done / total : 1)}  ${done}/${total} ${unit}  ${elapsed}${clearToEnd}`);
            this._drawn = true;
        } else
            this._stream.write(`${label}: ${done}/${total} ${unit} (${percent}%), ${elapsed} elapsed\n`);
    }

    /** Ends the redrawn line, so that what follows starts on a line of its own. */
    public finish() {
        if (this._drawn)
            this._stream.write("\n");
        this._drawn = false;
    }
}
