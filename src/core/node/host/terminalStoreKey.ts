import type {StoreKeySource} from "../database/keys/types.js";
import {envelopeFile} from "../database/keys/keyEnvelope.js";
import {storeKeyModeOf} from "../database/keys/storeKeyModeOf.js";
import {storeKeyFromEnvironment} from "../database/openDatabase.js";
import {promptPassphrase} from "./promptPassphrase.js";

/** A warning for the user: the front end prints it (on stderr; as JSON with --json). */
export type StoreKeyWarning = {code: "PASSPHRASE_IGNORED", message: string};

/**
 * What opens the database for a terminal front end (the CLI, web mode): `CLEANROOM_PASSPHRASE` when set; else, when the
 * database is protected by a passphrase and this is a terminal, the passphrase asked for there
 * (never echoed); else nothing (a database without a passphrase opens with its key file).
 * `CLEANROOM_PASSPHRASE` set for a database that has no passphrase cannot be used and is not: the
 * database opens with its key file, and `warn` says so (by default, a line on stderr), since whoever
 * set it believes the database is protected by it.
 */
export async function terminalStoreKey(database: string, warn: (warning: StoreKeyWarning) => void = printWarning): Promise<StoreKeySource> {
    const fromEnvironment = storeKeyFromEnvironment();
    const mode = storeKeyModeOf(database);
    if (fromEnvironment.passphrase != null && mode === "device")
        warn({
            code: "PASSPHRASE_IGNORED",
            message: `CLEANROOM_PASSPHRASE is set, but ${database} has no passphrase: it is opened with its key file ${envelopeFile(database)}, ` +
                `and the variable is ignored. To protect it with a passphrase: \`cleanroom passphrase set --db ${database}\` ` +
                "(the new passphrase from CLEANROOM_NEW_PASSPHRASE, or asked for)."
        });
    if (fromEnvironment.passphrase != null || mode !== "passphrase")
        return fromEnvironment;
    const passphrase = await promptPassphrase(`Passphrase for ${database}: `);
    return passphrase == null ? {} : {passphrase};
}

function printWarning(warning: StoreKeyWarning) {
    process.stderr.write(`Warning: ${warning.message}\n`);
}
