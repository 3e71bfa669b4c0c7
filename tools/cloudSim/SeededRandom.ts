/** A small deterministic PRNG (mulberry32) for the simulator's choices. Never for canaries. */
export class SeededRandom {
    private _state: number;

    public constructor(seed: number) {
        this._state = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
    }

    /** Uniform in [0, 1). */
    public next(): number {
        this._state = (this._state + 0x6d2b79f5) >>> 0;
        let t = this._state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
    }

    /** Whole number in [0, bound). */
    public int(bound: number): number {
        return Math.floor(this.next() * bound);
    }

    /** Whole number in [min, max]. */
    public between(min: number, max: number): number {
        return min + this.int(max - min + 1);
    }

    public chance(probability: number): boolean {
        return this.next() < probability;
    }

    public pick<T>(items: readonly T[]): T {
        if (items.length === 0)
            throw new RangeError("pick() from an empty list");
        return items[this.int(items.length)]!;
    }

    /** Fills the array with pseudo-random bytes (for deterministic test data only). */
    public fillBytes(bytes: Uint8Array) {
        for (let i = 0; i < bytes.length; i++)
            bytes[i] = this.int(256);
    }
}
