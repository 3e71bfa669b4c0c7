import {describe, expect, it} from "vitest";
import {StopTextDetector} from "../../src/core/node/engine/StopTextDetector.js";

describe("StopTextDetector", () => {
    it("never shows a stop text split across pieces, and stops there", () => {
        const detector = new StopTextDetector(["</s>", "[INST]"]);
        const shown: string[] = [];
        for (const piece of ["Hello", " world<", "/", "s> and more"]) {
            const {emit, stopped} = detector.push(piece);
            shown.push(emit);
            if (stopped)
                break;
        }
        expect(shown.join("")).toBe("Hello world");
    });

    it("releases held text that turned out not to be a stop text", () => {
        const detector = new StopTextDetector(["</s>"]);
        expect(detector.push("a </").emit).toBe("a ");
        expect(detector.push("b").emit).toBe("</b");
        expect(detector.push("<").emit).toBe("");
        expect(detector.flush()).toBe("<");
    });
});
