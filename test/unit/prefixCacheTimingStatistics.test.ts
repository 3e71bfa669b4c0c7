import {describe, expect, it} from "vitest";
import {mannWhitneyLessP} from "../../tools/endpointAudit/prefixCacheTimingProbe.js";

describe("the prefix-cache timing probe's significance (one-sided Mann-Whitney U)", () => {
    it("calls 16 same-prefix times all below 16 others very unlikely by chance, and interleaved ones likely", () => {
        const fast = Array.from({length: 16}, (_, index) => 10 + index * 0.1);
        const slow = Array.from({length: 16}, (_, index) => 40 + index * 0.1);
        expect(mannWhitneyLessP(fast, slow)).toBeLessThan(1e-5);
        expect(mannWhitneyLessP(slow, fast)).toBeGreaterThan(0.99);
        const interleaved = slow.map((value, index) => value + (index % 2 === 0 ? 0.05 : -0.05));
        expect(mannWhitneyLessP(interleaved, slow)).toBeGreaterThan(0.01);
    });

    it("ties count half: two identical samples give p near one half", () => {
        const same = Array.from({length: 12}, () => 5);
        expect(mannWhitneyLessP(same, same)).toBeCloseTo(0.5, 1);
    });
});
