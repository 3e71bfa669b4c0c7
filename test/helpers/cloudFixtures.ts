import Database from "better-sqlite3-multiple-ciphers";
import {createCanary, hashCanary} from "../../src/core/common/cloud/canary.js";
import type {CanaryBook, PlantedCanary} from "../../src/core/common/cloud/types.js";
import {migrations} from "../../src/core/node/database/migrations.js";
import {CanaryLedger} from "../../src/core/node/cloud/CanaryLedger.js";
import {type SeededRandom} from "../../tools/cloudSim/SeededRandom.js";

/** A fixed fingerprint key for tests (each install has its own random one). */
export const testFingerprintKey = new Uint8Array(32).map((_, index) => (index * 37 + 11) & 0xff);

/** A canary book over a Map: the canaries one "install" planted, by hash. */
export class MapCanaryBook implements CanaryBook {
    public readonly planted = new Map<string, PlantedCanary>();

    public plant(conversationId: string, requestId: string) {
        const canary = createCanary();
        this.planted.set(hashCanary(canary), {conversationId, requestId});
        return canary;
    }

    public lookup(canaryHash: string) {
        return this.planted.get(canaryHash);
    }
}

/** A canary ledger on a private in-memory database: one "install". */
export function memoryLedger() {
    return new CanaryLedger(new Database(migratedImage()));
}

let migratedDatabaseImage: Buffer | null = null;

/**
 * An empty database with every migration run, as bytes: each ledger opens its own copy, since a
 * test makes one per reply (thousands) and running the migrations took most of each reply's time.
 */
function migratedImage() {
    if (migratedDatabaseImage == null) {
        const db = new Database(":memory:");
        for (const migrate of migrations)
            migrate(db);
        migratedDatabaseImage = db.serialize();
        db.close();
    }
    return migratedDatabaseImage;
}

const vocabulary = (
    "the girl and her brother walked to school every morning past the old bakery where the baker sold warm bread " +
    "my sister sent the contract about the house on maple street with the bank account number for the deposit " +
    "our team met on tuesday to plan the project budget and the doctor called about the test results from last week " +
    "please remember the password for the garage door and the name of the lawyer who handled the family trust"
).split(" ");

export function prose(random: SeededRandom, words: number) {
    return Array.from({length: words}, () => random.pick(vocabulary)).join(" ") + ".";
}

export const canaryPattern = /CLRM-[A-Z2-7]{24}/;
