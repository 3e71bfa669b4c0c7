import {InvalidInputError} from "../../common/errors.js";
import {forgetDerivedKeys} from "../database/keys/deriveKey.js";
import {openKeyedDatabase} from "../database/keys/openKeyedDatabase.js";
import {rekeyDatabase} from "../database/keys/rekeyDatabase.js";
import type {StoreKeySource} from "../database/keys/types.js";
import {DatabaseLock} from "../database/lock/DatabaseLock.js";
import type {CoreHost} from "./openCoreHost.js";

/** What opens the database when no passphrase is set, and what becomes of it once one is. */
export type KeyWithoutPassphrase = {
    /** The key then: the OS keychain's (the app; made anew when none is kept) or none, its key file then (web mode). */
    key(): Promise<StoreKeySource>,
    /** Drops that key once a passphrase replaces it (the app: the keychain's copy). Defaults to nothing. */
    discard?(): Promise<void>
};

export type PassphraseChange = {
    database: string,
    /** Whether the database has a passphrase now. */
    passphraseSet: boolean,
    current: string | null,
    next: string | null,
    withoutPassphrase: KeyWithoutPassphrase
};

/** The key that opens the database now, checked without changing anything: WRONG_PASSPHRASE for a wrong `current`. */
export async function currentKeyFor({database, passphraseSet, current, next, withoutPassphrase}: PassphraseChange): Promise<StoreKeySource> {
    if (!passphraseSet) {
        if (next == null)
            throw new InvalidInputError("app.setPassphrase", ["no passphrase is set, so there is none to remove"]);
        if (current != null)
            throw new InvalidInputError("app.setPassphrase", ["current: no passphrase is set yet; leave it empty"]);
        return await withoutPassphrase.key();
    }
    if (current == null)
        throw new InvalidInputError("app.setPassphrase", ["current: the current passphrase is needed to change or remove it"]);
    // A read-only connection only checks the key: it writes nothing, and a wrong passphrase throws WrongPassphraseError.
    openKeyedDatabase(database, {passphrase: current}, true).db.close();
    return {passphrase: current};
}

/** What `change` does, as in "Cannot <operation> <database>" (`DATABASE_IN_USE`). */
export function passphraseOperation(change: Pick<PassphraseChange, "current" | "next">): string {
    return change.next == null ? "remove the passphrase of" : change.current == null ? "set the passphrase of" : "change the passphrase of";
}

/**
 * Re-keys the database of `host` (`rekeyDatabase`: atomic) from `currentKey` to the key `change`
 * asks for. `host` is closed first (every reply stopped, every session scrubbed, the database
 * closed), and the core reopened after, under the new key, or under the old one if the re-key
 * failed (`failure` says why). The model that was running is loaded again. Throws only when the
 * core cannot be reopened at all, and `DATABASE_IN_USE` before anything is closed or changed
 * while another process has the database open: the whole switch, reopening included, runs with
 * the database to this process alone (`DatabaseLock`).
 */
export async function rekeyOpenDatabase(host: CoreHost, currentKey: StoreKeySource, change: PassphraseChange,
    open: (key: StoreKeySource) => Promise<CoreHost>): Promise<{host: CoreHost, passphraseSet: boolean, failure: unknown}> {
    return await DatabaseLock.of(change.database).exclusivelyAsync(passphraseOperation(change), () => rekeyAndReopen(host, currentKey, change, open));
}

async function rekeyAndReopen(host: CoreHost, currentKey: StoreKeySource, change: PassphraseChange,
    open: (key: StoreKeySource) => Promise<CoreHost>): Promise<{host: CoreHost, passphraseSet: boolean, failure: unknown}> {
    const status = host.service.models.status;
    const runningModel = status.state === "ready" ? status.path : null;
    await host.dispose();
    let reopenWith = currentKey;
    let passphraseSet = change.passphraseSet;
    let failure: unknown = null;
    try {
        const nextKey = change.next != null ? {passphrase: change.next} : await change.withoutPassphrase.key();
        rekeyDatabase(change.database, currentKey, nextKey);
        reopenWith = nextKey;
        passphraseSet = change.next != null;
    } catch (error) {
        failure = error;
    } finally {
        forgetDerivedKeys();
    }
    const reopened = await open(reopenWith);
    if (runningModel != null)
        void reopened.service.models.load(runningModel);
    if (failure == null && passphraseSet && !change.passphraseSet)
        await change.withoutPassphrase.discard?.();
    return {host: reopened, passphraseSet, failure};
}
