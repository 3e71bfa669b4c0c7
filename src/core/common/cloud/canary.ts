import {sha256, sha256Hex} from "./sha256.js";

/**
 * Cleanroom's published canary format, so that every install recognises every other's:
 * `CLRM-` followed by 24 characters of the RFC 4648 base32 alphabet (A-Z, 2-7): 20 random
 * characters from a CSPRNG, then a 4-character checksum, the first 4 characters of the
 * unpadded base32 encoding of SHA-256(ASCII `CLRM-` + the 20 random characters).
 * A string of that shape with a wrong checksum is not a canary.
 */
export const canaryPrefix = "CLRM-";
/** The prefix as it appears after the scanner drops separators and upper-cases. */
export const canaryNormalizedPrefix = "CLRM";
export const canaryAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
export const canaryRandomLength = 20;
export const canaryChecksumLength = 4;
/** Characters after the prefix: 24. */
export const canaryBodyLength = canaryRandomLength + canaryChecksumLength;
/** Whole canary: 29 characters. */
export const canaryLength = canaryPrefix.length + canaryBodyLength;

const canaryPattern = /^CLRM-[A-Z2-7]{24}$/;

/** Fills the array with random bytes. Defaults to `globalThis.crypto.getRandomValues`. */
export type RandomBytesSource = (bytes: Uint8Array) => void;

export type Canary = string & {readonly __canary: unique symbol};

/** A fresh canary from a CSPRNG (or, for tests and the simulator only, the given byte source). */
export function createCanary(randomBytes: RandomBytesSource = cryptoRandomBytes): Canary {
    const bytes = new Uint8Array(canaryRandomLength);
    randomBytes(bytes);
    let random = "";
    // 256 is a multiple of 32, so masking to 5 bits keeps every character equally likely.
    for (const byte of bytes)
        random += canaryAlphabet[byte & 31];
    return (canaryPrefix + random + canaryChecksum(random)) as Canary;
}

/**
 * The 4-character checksum of 20 random characters: the first 4 characters of the
 * unpadded base32 encoding of SHA-256(`CLRM-` + random), i.e. its first 20 bits.
 */
export function canaryChecksum(random: string): string {
    const digest = sha256(canaryPrefix + random);
    // First 20 bits of the digest as four 5-bit groups.
    const bits = (digest[0]! << 12) | (digest[1]! << 4) | (digest[2]! >>> 4);
    let checksum = "";
    for (let shift = 15; shift >= 0; shift -= 5)
        checksum += canaryAlphabet[(bits >>> shift) & 31];
    return checksum;
}

/** Whether the string is exactly one canary: the format, and a checksum that matches. */
export function isValidCanary(text: string): text is Canary {
    if (!canaryPattern.test(text))
        return false;
    const random = text.slice(canaryPrefix.length, canaryPrefix.length + canaryRandomLength);
    return canaryChecksum(random) === text.slice(canaryPrefix.length + canaryRandomLength);
}

/**
 * Checks the 24 characters after the prefix, already upper-case base32. Returns the
 * canonical canary (`CLRM-` + body) when the checksum matches, else `null`.
 */
export function canaryFromBody(body: string): Canary | null {
    const canary = canaryPrefix + body;
    return isValidCanary(canary) ? canary : null;
}

/**
 * In a folded body, a letter that reads as `I` or as `L` alike: a vertical stroke with no case
 * (Hebrew vav, Arabic alef, Lisu `ꓲ`), whose skeleton is `l` like both.
 */
export const canaryIOrL = "l";
/** Most `I`-or-`L` characters tried in a body's random part: 2^6 readings, each a SHA-256. */
const maxIOrLReadings = 6;

/**
 * Checks a folded body (`canaryIOrL` standing for either `I` or `L`): each reading of its random
 * part is checksummed and compared with the checksum as written, so the checksum is verified on
 * the folded form. Returns the canonical canary, or `null` (also when more than 6 characters of the
 * random part could be either: 2^-20 per reading would then add up).
 */
export function canaryFromFoldedBody(body: string): Canary | null {
    if (!body.includes(canaryIOrL))
        return canaryFromBody(body);
    const random = body.slice(0, canaryRandomLength);
    const written = body.slice(canaryRandomLength);
    const open: number[] = [];
    for (let index = 0; index < random.length; index++)
        if (random[index] === canaryIOrL)
            open.push(index);
    if (open.length > maxIOrLReadings)
        return null;
    const chars = random.split("");
    for (let reading = 0; reading < 1 << open.length; reading++) {
        open.forEach((index, bit) => void (chars[index] = (reading >>> bit & 1) === 1 ? "L" : "I"));
        const candidate = chars.join("");
        const checksum = canaryChecksum(candidate);
        if (readsAs(written, checksum))
            return (canaryPrefix + candidate + checksum) as Canary;
    }
    return null;
}

function readsAs(folded: string, canonical: string) {
    for (let index = 0; index < canonical.length; index++) {
        const char = folded[index];
        if (char !== canonical[index] && !(char === canaryIOrL && (canonical[index] === "I" || canonical[index] === "L")))
            return false;
    }
    return folded.length === canonical.length;
}

/** What the client remembers of a canary it planted: SHA-256 of the canonical string, hex. */
export function hashCanary(canary: string): string {
    return sha256Hex(canary);
}

/** Unpadded RFC 4648 base32 of the bytes (exported for tests of the checksum definition). */
export function base32Encode(bytes: Uint8Array): string {
    let output = "";
    let buffer = 0;
    let bufferedBits = 0;
    for (const byte of bytes) {
        buffer = ((buffer << 8) | byte) & 0xffff;
        bufferedBits += 8;
        while (bufferedBits >= 5) {
            output += canaryAlphabet[(buffer >>> (bufferedBits - 5)) & 31];
            bufferedBits -= 5;
        }
    }
    if (bufferedBits > 0)
        output += canaryAlphabet[(buffer << (5 - bufferedBits)) & 31];
    return output;
}

function cryptoRandomBytes(bytes: Uint8Array) {
    globalThis.crypto.getRandomValues(bytes);
}
