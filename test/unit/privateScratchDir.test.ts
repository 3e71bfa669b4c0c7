import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {tempDir} from "../helpers/tempCore.js";

describe("the scrub's scratch folder", () => {
    it("is removed with what it holds when its `using` block is left, and disposing it again is harmless", () => {
        let scratchLeft: PrivateScratchDir;
        {
            using scratch = PrivateScratchDir.create(tempDir("scratch-using"));
            scratchLeft = scratch;
            fs.writeFileSync(scratch.newFilePath("residue"), "left by a scrub that failed");
            expect(fs.readdirSync(scratch.path)).toHaveLength(1);
        }
        expect(fs.existsSync(scratchLeft.path)).toBe(false);
        expect(() => scratchLeft.dispose()).not.toThrow();
        expect(() => scratchLeft.newFilePath("after")).toThrow(/disposed/);
    });
});
