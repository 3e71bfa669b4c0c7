import {describe, expect, it} from "vitest";
import {maxNeverSendPhrases} from "../../src/core/common/api/limits.js";
import {addNeverSendPhrase, removeNeverSendPhrase} from "../../src/core/common/secretScan/neverSendList.js";

describe("the Never send list's edits (Settings and the CLI)", () => {
    it("adds a phrase trimmed, once: the same words in another case or spacing are the entry already there", () => {
        expect(addNeverSendPhrase(["Bluebird"], "  Project Falcon ")).toEqual({list: ["Bluebird", "Project Falcon"], added: true});
        expect(addNeverSendPhrase(["Project Falcon"], "project\tFALCON")).toEqual({list: ["Project Falcon"], added: false});
    });

    it("removes a phrase in any case or spacing, and says when it was not there", () => {
        expect(removeNeverSendPhrase(["Project Falcon", "Bluebird"], "PROJECT  falcon")).toEqual({list: ["Bluebird"], removed: true});
        expect(removeNeverSendPhrase(["Bluebird"], "Nightjar")).toEqual({list: ["Bluebird"], removed: false});
    });

    it("refuses an empty phrase, a too long one and a full list, saying which", () => {
        expect(() => addNeverSendPhrase([], "   ")).toThrow("This phrase cannot be added: a phrase cannot be empty.");
        expect(() => addNeverSendPhrase([], "x".repeat(201))).toThrow("a phrase can be at most 200 characters");
        const full = Array.from({length: maxNeverSendPhrases}, (_, index) => `phrase ${index}`);
        expect(() => addNeverSendPhrase(full, "one more")).toThrow(`The Never send list is full: it holds at most ${maxNeverSendPhrases} phrases.`);
        // A phrase already there is no addition, even to a full list.
        expect(addNeverSendPhrase(full, "PHRASE 7")).toEqual({list: full, added: false});
    });
});
