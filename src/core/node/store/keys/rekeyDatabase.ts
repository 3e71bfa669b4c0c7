import fs from "node:fs";
import {fsyncFile, renameDurably} from "./durableFiles.js";
import {envelopeFile, nextEnvelopeFile, writeEnvelope, type KeyEnvelope} from "./keyEnvelope.js";
import {exportDatabase, keyFor, newEnvelopeFor, openKeyedDatabase, switchFile, switchFiles} from "./openKeyedDatabase.js";
import type {StoreKeySource} from "./types.js";

/**
 * Re-keys the database, atomically: sets, changes or removes its passphrase (`next.passphrase`
 * null: back to the keychain key given in `next`, or a key file where there is no keychain). The
 * database is opened with `current` (a wrong passphrase changes nothing), exported under the new
 * key into a new file beside it, flushed; the new envelope is written beside the old one; then the
 * new file is renamed over the database and the envelope switched. A crash before the rename
 * leaves the database under its old key; after it, the next open finishes the envelope's switch
 * (`settleInterruptedSwitch`). No other connection may hold the database meanwhile.
 */
export function rekeyDatabase(file: string, current: StoreKeySource, next: StoreKeySource): KeyEnvelope {
    const {rekeyed} = switchFiles(file);
    const envelope = newEnvelopeFor(next);
    const key = keyFor(file, envelope, next);
    const {db} = openKeyedDatabase(file, current, false);
    try {
        db.pragma("wal_checkpoint(TRUNCATE)");
        exportDatabase(db, rekeyed, key);
    } finally {
        db.close();
    }
    fsyncFile(rekeyed);
    writeEnvelope(nextEnvelopeFile(file), envelope);
    switchFile(file, rekeyed);
    renameDurably(nextEnvelopeFile(file), envelopeFile(file));
    for (const suffix of ["-wal", "-shm"])
        fs.rmSync(file + suffix, {force: true});
    return envelope;
}
