import crypto from "node:crypto";
import fs from "node:fs";
import * as z from "zod";
import {writeFileDurably} from "./durableFiles.js";
import {KeyFileDamagedError} from "./KeyFileDamagedError.js";

/** scrypt's cost: N = 2^16, r = 8 (64 MiB of memory per derivation), p = 1. */
export const scryptParameters = {N: 1 << 16, r: 8, p: 1} as const;

/**
 * log2 of scrypt's N for passphrase envelopes created from now on (as gocryptfs's `-scryptn`): from 14 (16 MiB, a quarter of
 * the default's work, the least this build reads) to 20 (1 GiB). A key file records its own cost, so files made with
 * another one keep opening. The test suite sets 14: it derives about a hundred keys, none of its claims depends on the cost.
 */
export const scryptCostVariable = "CLEANROOM_SCRYPT_LOG_N";
const scryptLogNRange = {min: 14, max: 20} as const;

/** The scrypt parameters for a new passphrase envelope: the default, or `CLEANROOM_SCRYPT_LOG_N`'s cost; a value out of range throws. */
export function newScryptParameters(env: NodeJS.ProcessEnv = process.env): {N: number, r: number, p: number} {
    const setting = env[scryptCostVariable];
    if (setting == null || setting === "")
        return {...scryptParameters};
    const logN = /^\d+$/.test(setting) ? Number(setting) : NaN;
    if (!(logN >= scryptLogNRange.min && logN <= scryptLogNRange.max))
        throw new Error(`${scryptCostVariable} must be a whole number from ${scryptLogNRange.min} to ${scryptLogNRange.max} (log2 of scrypt's N; ` +
            `the default is ${Math.log2(scryptParameters.N)}), not ${JSON.stringify(setting)}.`);
    return {...scryptParameters, N: 2 ** logN};
}

const HexKey = z.string().regex(/^[0-9a-f]{64}$/);
const ScryptEnvelopeSchema = z.strictObject({
    version: z.literal(1),
    mode: z.literal("passphrase"),
    kdf: z.strictObject({
        name: z.literal("scrypt"),
        salt: z.string().regex(/^[0-9a-f]{32,128}$/),
        N: z.number().int().min(2 ** scryptLogNRange.min).max(1 << 22),
        r: z.number().int().min(1).max(32),
        p: z.number().int().min(1).max(16)
    })
});

/**
 * How the database's key is found, kept beside the database (`<database>-key.json`, mode 0600). It
 * never holds the key of a passphrase-protected or keychain-keyed database: only the KDF's salt and
 * cost, or that the key is in the OS keychain. Without a passphrase outside the desktop app (CLI, web
 * mode), there is no keychain, and the random key itself is kept here ("device"): a copy of the
 * database alone (a backup, a synced folder) is then unreadable, but anyone who can read this folder can read it.
 */
export const KeyEnvelopeSchema = z.discriminatedUnion("mode", [
    ScryptEnvelopeSchema,
    z.strictObject({version: z.literal(1), mode: z.literal("keychain")}),
    z.strictObject({version: z.literal(1), mode: z.literal("device"), key: HexKey})
]);

export type KeyEnvelope = z.infer<typeof KeyEnvelopeSchema>;

const envelopeSuffix = "-key.json";

/** The envelope's file for a database. */
export function envelopeFile(database: string): string {
    return `${database}${envelopeSuffix}`;
}

/** The envelope a re-key is switching to, until the switch is complete. */
export function nextEnvelopeFile(database: string): string {
    return `${database}-key.next.json`;
}

/** The envelope in `file`, null when there is none; a file that is not a valid envelope throws `KeyFileDamagedError`. */
export function readEnvelope(file: string): KeyEnvelope | null {
    if (!fs.existsSync(file))
        return null;
    const text = fs.readFileSync(file, "utf8");
    const database = file.endsWith(envelopeSuffix) ? file.slice(0, -envelopeSuffix.length) : file;
    if (text.trim() === "")
        throw new KeyFileDamagedError(file, database, "it is empty");
    let raw: unknown;
    try {
        raw = JSON.parse(text);
    } catch {
        throw new KeyFileDamagedError(file, database, "it is not valid JSON: cut short or overwritten");
    }
    const parsed = KeyEnvelopeSchema.safeParse(raw);
    if (!parsed.success)
        throw new KeyFileDamagedError(file, database, "its contents are not a key file Cleanroom can read");
    return parsed.data;
}

export function writeEnvelope(file: string, envelope: KeyEnvelope): void {
    writeFileDurably(file, JSON.stringify(envelope) + "\n");
}

/** A fresh passphrase envelope (new random salt). */
export function newPassphraseEnvelope(): KeyEnvelope {
    return {version: 1, mode: "passphrase", kdf: {name: "scrypt", salt: crypto.randomBytes(16).toString("hex"), ...newScryptParameters()}};
}

/** A fresh device envelope (a new random key). */
export function newDeviceEnvelope(): KeyEnvelope {
    return {version: 1, mode: "device", key: crypto.randomBytes(32).toString("hex")};
}
