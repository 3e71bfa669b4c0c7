/**
 * Times of conversation activity (`updatedAt`) that never tie: each is later than every one this
 * process issued or observed, even within one millisecond. Two conversations created or answered
 * in the same millisecond would otherwise swap places in the list from one listing to the next.
 * One clock is shared by every store of the process (stored and incognito), so their merged list
 * has one order too.
 */
export class ActivityClock {
    private _last = 0;

    /** A time (ms since the epoch) later than every time issued or observed before. */
    public next(): number {
        this._last = Math.max(Date.now(), this._last + 1);
        return this._last;
    }

    /** Records a time written by someone else (a later time that a database chose), so that `next` stays after it. */
    public observe(time: number): void {
        this._last = Math.max(this._last, time);
    }
}

/** The clock every store of this process shares unless given another. */
export const processActivityClock = new ActivityClock();
