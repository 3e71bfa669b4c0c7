import type {SeededRandom} from "./SeededRandom.js";

export type MangleOptions = {
    /** Chance that a letter's case is flipped. Defaults to `0.5`. */
    caseFlipRate?: number,
    /** Chance that separators are inserted after a character. Defaults to `0.3`. */
    insertRate?: number,
    /** Most separators inserted at one place. Defaults to `2`. */
    maxInserted?: number,
    /** Chance that a space or punctuation mark is replaced by other separators. Defaults to `0.5`. */
    punctuationRate?: number
};

const defaultCaseFlipRate = 0.5;
const defaultInsertRate = 0.3;
const defaultMaxInserted = 2;
const defaultPunctuationRate = 0.5;

/** What the `paraphrase` mode inserts: spaces, line breaks, zero-width characters, hyphens, underscores, dots. */
export const mangleSeparators = [" ", "  ", "\n", "\t", "\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF", "-", "_", ".", "\u00A0", "\u2010"] as const;

const letterOrDigit = /[\p{L}\p{N}]/u;

/**
 * Mangles leaked text the way the simulator's `paraphrase` mode does: case flipped at random,
 * separators inserted between characters, spaces and punctuation swapped for others. Letters
 * and digits keep their order, so a normalising scanner can still recognise a canary.
 */
export function mangleText(text: string, random: SeededRandom, options: MangleOptions = {}): string {
    const caseFlipRate = options.caseFlipRate ?? defaultCaseFlipRate;
    const insertRate = options.insertRate ?? defaultInsertRate;
    const maxInserted = options.maxInserted ?? defaultMaxInserted;
    const punctuationRate = options.punctuationRate ?? defaultPunctuationRate;

    const chars = Array.from(text);
    let output = "";
    for (let i = 0; i < chars.length; i++) {
        let char = chars[i]!;
        if (letterOrDigit.test(char)) {
            if (random.chance(caseFlipRate))
                char = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase();
        } else if (random.chance(punctuationRate))
            char = random.pick(mangleSeparators);
        output += char;

        if (i < chars.length - 1 && random.chance(insertRate)) {
            const count = random.between(1, maxInserted);
            for (let j = 0; j < count; j++)
                output += random.pick(mangleSeparators);
        }
    }
    return output;
}
