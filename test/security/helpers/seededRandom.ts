import {testSeed} from "../../helpers/testSeed.js";

/** A small seeded PRNG (mulberry32): the same seed gives the same run, so every failure can be replayed. */
export class SeededRandom {
    private _state: number;

    public constructor(seed: number) {
        this._state = seed >>> 0;
    }

    /** This run's seed: fixed unless told otherwise (see `testSeed`); CLEANROOM_FUZZ_SEED still replays. */
    public static runSeed(label = "fuzz"): number {
        return testSeed(label, "CLEANROOM_FUZZ_SEED");
    }

    /** Uniform in [0, 1). */
    public next(): number {
        this._state = (this._state + 0x6D2B79F5) >>> 0;
        let t = this._state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
    }

    /** Integer in [min, max). */
    public int(min: number, max: number): number {
        return min + Math.floor(this.next() * (max - min));
    }

    public pick<T>(items: readonly T[]): T {
        if (items.length === 0)
            throw new RangeError("pick from an empty list");
        return items[this.int(0, items.length)]!;
    }

    public chance(probability: number): boolean {
        return this.next() < probability;
    }
}
