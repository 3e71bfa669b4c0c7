import path from "node:path";
import {describe, expect, it} from "vitest";
import {
    envelopeFile, newPassphraseEnvelope, newScryptParameters, readEnvelope, scryptCostVariable, writeEnvelope
} from "../../src/core/node/database/keys/keyEnvelope.js";
import {tempDir} from "../helpers/tempCore.js";

/** The passphrase's scrypt cost: 2^16 unless CLEANROOM_SCRYPT_LOG_N names another from 14 to 20 (the suite runs at 14). */
describe("scrypt's cost for new passphrase envelopes", () => {
    it("is N = 2^16, r = 8, p = 1 when the variable is unset or empty", () => {
        expect(newScryptParameters({})).toEqual({N: 65_536, r: 8, p: 1});
        expect(newScryptParameters({[scryptCostVariable]: ""})).toEqual({N: 65_536, r: 8, p: 1});
    });

    it("takes log2 of N from the variable, from 14 to 20", () => {
        expect(newScryptParameters({[scryptCostVariable]: "14"})).toEqual({N: 16_384, r: 8, p: 1});
        expect(newScryptParameters({[scryptCostVariable]: "20"})).toEqual({N: 1_048_576, r: 8, p: 1});
    });

    it("refuses a value out of range or not a whole number, naming the variable, rather than fall back to a cost nobody chose", () => {
        for (const value of ["13", "21", "16.5", "sixteen", " 15", "-14", "0x10"])
            expect(() => newScryptParameters({[scryptCostVariable]: value}), value)
                .toThrow(`${scryptCostVariable} must be a whole number from 14 to 20 (log2 of scrypt's N; the default is 16), not ${JSON.stringify(value)}.`);
    });

    it("is recorded in the key file, which opens again whatever the variable says later", () => {
        const file = envelopeFile(path.join(tempDir("scrypt-cost"), "store.db"));
        // Under the suite's environment (vitest.config.ts) the variable says 14.
        expect(process.env[scryptCostVariable]).toBe("14");
        const envelope = newPassphraseEnvelope();
        expect(envelope).toMatchObject({mode: "passphrase", kdf: {name: "scrypt", N: 16_384, r: 8, p: 1}});
        writeEnvelope(file, envelope);
        expect(readEnvelope(file)).toEqual(envelope);
    });
});
