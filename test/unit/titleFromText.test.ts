import {describe, expect, it} from "vitest";
import {isWellFormed, titleFromText} from "../../src/core/common/titleFromText.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";

const graphemes = (text: string) => [...new Intl.Segmenter(undefined, {granularity: "grapheme"}).segment(text)].map((part) => part.segment);
/** True when UTF-8 encoding and decoding gives back the same string, as SQLite will store it. */
const survivesUtf8 = (text: string) => new TextDecoder("utf-8", {fatal: true}).decode(new TextEncoder().encode(text)) === text;

describe("automatic conversation titles cut on grapheme boundaries", () => {
    const clusters = {
        "emoji with a skin tone": "👍🏽",
        "a flag (two regional indicators)": "🇫🇷",
        "a letter with combining marks": "e\u0301\u0323",
        "a ZWJ family": "👨‍👩‍👧‍👦",
        "a ZWJ profession with a tone": "👩🏾‍🚀",
        "a keycap": "1\uFE0F\u20E3"
    };

    it.each(Object.entries(clusters))("%s straddling the limit is kept whole or dropped whole, never split", (_name, cluster) => {
        for (let before = 55; before <= 61; before++) {
            const text = "a".repeat(before) + cluster + "b".repeat(20);
            const title = titleFromText(text);
            expect(isWellFormed(title)).toBe(true);
            expect(survivesUtf8(title)).toBe(true);
            expect(graphemes(title).length).toBeLessThanOrEqual(60);
            const inTitle = graphemes(title).filter((part) => part !== "a" && part !== "b" && part !== "…");
            expect(inTitle.every((part) => part === cluster), `only whole clusters: ${JSON.stringify(inTitle)}`).toBe(true);
        }
    });

    it("a title made only of emoji is counted in graphemes, not UTF-16 units", () => {
        const text = "a" + "👨‍👩‍👧‍👦".repeat(70); // 11 UTF-16 units each
        const title = titleFromText(text);
        expect(graphemes(title)).toEqual(["a", ...Array<string>(58).fill("👨‍👩‍👧‍👦"), "…"]);
        expect(survivesUtf8(title)).toBe(true);
        // The old cut, text.slice(0, 60), split the sixth family inside its second emoji and left a lone surrogate.
        expect(isWellFormed(text.slice(0, 60))).toBe(false);
    });

    it("keeps a short first line as it is, cuts at a word when one ends late enough, and skips blank lines", () => {
        expect(titleFromText("  Hello 🇫🇷 world  \nsecond line")).toBe("Hello 🇫🇷 world");
        expect(titleFromText("\n\n   \nReal first line")).toBe("Real first line");
        expect(titleFromText("   \n  ")).toBe("New conversation");
        const words = "word ".repeat(20).trim();
        const title = titleFromText(words);
        expect(title.endsWith("word…")).toBe(true);
        expect(graphemes(title).length).toBeLessThanOrEqual(60);
        expect(titleFromText("x".repeat(100), {maxGraphemes: 48})).toBe("x".repeat(47) + "…");
    });

    it("a title of printable ASCII (read without ICU's segmenter) is cut as the segmenter's graphemes cut it", () => {
        const reference = (text: string) => {
            const parts = graphemes(text);
            if (parts.length <= 60)
                return text;
            const kept = parts.slice(0, 59);
            const lastSpace = kept.lastIndexOf(" ");
            return (lastSpace >= kept.length / 2 ? kept.slice(0, lastSpace) : kept).join("").trimEnd() + "…";
        };
        const words = ["Once", "upon", "a", "time,", "in", "a", "small", "house", "~{|}", "near", "the", "woods!", "x".repeat(40), "?"];
        for (let length = 1; length <= words.length; length++) {
            const text = words.slice(0, length).join(" ");
            expect(titleFromText(text)).toBe(reference(text));
        }
        expect(titleFromText("Once upon a time, in a small house near the woods, there lived a girl who loved")).toBe("Once upon a time, in a small house near the woods, there…");
    });

    it("a lone surrogate in the text becomes U+FFFD in the title", () => {
        expect(titleFromText("ab\uD83D cd")).toBe("ab\uFFFD cd");
    });

    it("the store refuses a title that is not well-formed Unicode instead of writing invalid UTF-8", () => {
        const db = openDatabase(":memory:");
        const store = new ConversationStore(db);
        expect(() => store.create({title: "half an emoji \uD83D"})).toThrow(expect.objectContaining({code: "INVALID_INPUT"}));
        const conversation = store.create({title: "fine 👍🏽"});
        expect(() => store.update(conversation.id, {title: "\uDC4D"})).toThrow(expect.objectContaining({code: "INVALID_INPUT"}));
        expect(store.get(conversation.id).title).toBe("fine 👍🏽");
        db.close();
    });
});
