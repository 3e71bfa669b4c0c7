import type {StoreKeySource} from "../store/keys/types.js";
import {storeKeyModeOf} from "../store/keys/storeKeyModeOf.js";
import {storeKeyFromEnvironment} from "../store/openDatabase.js";
import {promptPassphrase} from "./promptPassphrase.js";

/**
 * What opens the database for a terminal front end (the CLI, web mode): `CLEANROOM_PASSPHRASE` when set; else, when the
 * database is protected by a passphrase and this is a terminal, the passphrase asked for there
 * (never echoed); else nothing (a database without a passphrase opens with its key file).
 */
export async function terminalStoreKey(database: string): Promise<StoreKeySource> {
    const fromEnvironment = storeKeyFromEnvironment();
    if (fromEnvironment.passphrase != null || storeKeyModeOf(database) !== "passphrase")
        return fromEnvironment;
    const passphrase = await promptPassphrase(`Passphrase for ${database}: `);
    return passphrase == null ? {} : {passphrase};
}
