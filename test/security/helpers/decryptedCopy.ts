import fs from "node:fs";
import path from "node:path";
import {envelopeFile} from "../../../src/core/node/database/keys/keyEnvelope.js";
import {openKeyedDatabase} from "../../../src/core/node/database/keys/openKeyedDatabase.js";
import type {StoreKeySource} from "../../../src/core/node/database/keys/types.js";

/**
 * What someone holding the key would read from the database's files: a copy of the file and its
 * WAL, decrypted page by page (`PRAGMA rekey = ''`, free pages included) into a plain file. Its
 * bytes show whatever deleted text the pages still hold, which the encrypted bytes alone cannot.
 */
export function decryptedCopy(database: string, dir: string, key: StoreKeySource = {}): string {
    const copy = path.join(dir, `decrypted-${path.basename(database)}-${Date.now()}.db`);
    fs.copyFileSync(database, copy);
    if (fs.existsSync(database + "-wal"))
        fs.copyFileSync(database + "-wal", copy + "-wal");
    fs.copyFileSync(envelopeFile(database), envelopeFile(copy));
    const {db} = openKeyedDatabase(copy, key, false);
    db.pragma("journal_mode = DELETE"); // copies the WAL's frames into the file
    db.pragma("rekey = ''");
    db.close();
    return copy;
}
