import {describe, expect, it} from "vitest";
import {renderProgressBar} from "../../src/cli/renderProgressBar.js";
import {StepProgress} from "../../src/cli/StepProgress.js";

describe("CLI progress", () => {
    it("draws a bar of fixed width with the percentage", () => {
        expect(renderProgressBar(0)).toBe(`[${".".repeat(30)}]   0%`);
        expect(renderProgressBar(1 / 3)).toBe(`[${"#".repeat(10)}${".".repeat(20)}]  33%`);
        expect(renderProgressBar(1)).toBe(`[${"#".repeat(30)}] 100%`);
        expect(renderProgressBar(7)).toBe(renderProgressBar(1));
        expect(renderProgressBar(Number.NaN)).toBe(renderProgressBar(0));
    });

    it("on a terminal redraws one line in place (count, percentage, elapsed time) and ends it once", () => {
        let written = "";
        let clock = 0;
        const progress = new StepProgress({isTTY: true, write: (text) => (written += text)},
            {label: "audit", total: 4, unit: "requests", now: () => clock});
        clock = 1500;
        progress.update(1);
        clock = 65_000;
        progress.update(4);
        progress.finish();
        progress.finish();
        expect(written).toBe(
            `\raudit ${renderProgressBar(0.25)}  1/4 requests  2s\x1b[K` +
            `\raudit ${renderProgressBar(1)}  4/4 requests  1m05s\x1b[K\n`
        );
    });

    it("elsewhere writes one plain line per step", () => {
        let written = "";
        const progress = new StepProgress({isTTY: false, write: (text) => (written += text)},
            {label: "audit", total: 3, unit: "requests", now: () => 0});
        for (let done = 1; done <= 3; done++)
            progress.update(done);
        progress.finish();
        expect(written).toBe("audit: 1/3 requests (33%), 0s elapsed\naudit: 2/3 requests (66%), 0s elapsed\naudit: 3/3 requests (100%), 0s elapsed\n");
    });
});
