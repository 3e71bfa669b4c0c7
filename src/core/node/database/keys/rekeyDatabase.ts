import fs from "node:fs";
import {fsyncFile, renameDurably} from "./durableFiles.js";
import {envelopeFile, nextEnvelopeFile, writeEnvelope, type KeyEnvelope} from "./keyEnvelope.js";
import {exportDatabase, keyFor, newEnvelopeFor, openKeyedDatabase, switchFile, switchFiles} from "./openKeyedDatabase.js";
import type {StoreKeySource} from "./types.js";
import {DatabaseLock} from "../lock/DatabaseLock.js";

/**
 * Re-keys the database, atomically: sets, changes or removes its passphrase (`next.passphrase`
 * null: back to the keychain key given in `next`, or a key file where there is no keychain). The
 * database is opened with `current` (a wrong passphrase changes nothing), exported under the new
 * key into a new file beside it, flushed; the new envelope is written beside the old one; then the
 * new file is renamed over the database and the envelope switched. A crash before the rename
 * leaves the database under its old key; after it, the next open finishes the envelope's switch
 * (`settleInterruptedSwitch`). It runs with the database to this process alone (`DatabaseLock`):
 * refused with `DATABASE_IN_USE`, nothing changed, while another process has it open; this
 * process's own connections must be closed first (a connection left open would go on under the old key).
 */
export function rekeyDatabase(file: string, current: StoreKeySource, next: StoreKeySource): KeyEnvelope {
    const operation = next.passphrase != null ? "set the passphrase of" : "remove the passphrase of";
    return DatabaseLock.of(file).exclusively(operation, () => rekeyExclusively(file, current, next));
}

function rekeyExclusively(file: string, current: StoreKeySource, next: StoreKeySource): KeyEnvelope {
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
