import type {CoreService} from "../rpc/createCoreService.js";
import {storeKeyModeOf} from "../database/keys/storeKeyModeOf.js";
import {LockingCoreService} from "./LockingCoreService.js";
import {openCoreHost, type CoreHost, type CoreHostOptions} from "./openCoreHost.js";
import type {KeyWithoutPassphrase} from "./rekeyOpenDatabase.js";
import {UnlockBackoff, unlockBackoffFile, type UnlockBackoffOptions} from "../database/keys/UnlockBackoff.js";

export type LockableCoreHostOptions = CoreHostOptions & {
    /**
     * Locks a passphrase-protected core after this long idle; null never. Overrides the saved idle
     * time (Settings, `lockAfterMinutes`). Defaults to the saved one (15 minutes unless changed).
     */
    idleLockMs?: number | null,
    /** Runs after each unlock with the core just opened (the core open at start is `LockableCoreHost.opened`). */
    onUnlocked?: (host: CoreHost) => Promise<void> | void,
    /** Runs after each lock, once the core is closed (see `LockingCoreServiceOptions.onLocked`). Defaults to nothing. */
    onLocked?: () => void,
    /**
     * What opens the database without a passphrase (and what removing one switches to): the app's
     * keychain key. Defaults to none: the key file beside the database (web mode).
     */
    withoutPassphrase?: KeyWithoutPassphrase,
    /**
     * The back-off of `app.unlock` after wrong passphrases. Defaults to 1 s doubling up to 5 min,
     * kept beside the database (`<database>.unlock-backoff`) so that a restart does not reset it.
     */
    unlockBackoff?: UnlockBackoffOptions
};

export type LockableCoreHost = {
    service: CoreService,
    /** The core open from the start (no passphrase, or one given at start); null when it starts locked. */
    opened: CoreHost | null,
    locked: () => boolean,
    /** Disposes the service for good (`LockingCoreService.dispose`). */
    dispose(): Promise<void>
};

/**
 * The core of the app and web mode, behind `LockingCoreService`. Without a passphrase it is open
 * (with `withoutPassphrase`'s key) and never locked. With one, it opens locked unless
 * `key.passphrase` was given (then a wrong one fails here, as in the CLI), and `app.unlock` opens
 * it. `app.setPassphrase` switches between the two at run time.
 */
export async function openLockableCoreHost({idleLockMs, onUnlocked, onLocked, withoutPassphrase, unlockBackoff, ...options}: LockableCoreHostOptions): Promise<LockableCoreHost> {
    const keyWithoutPassphrase = withoutPassphrase ?? {key: async () => ({})};
    // The passphrase given at start is used once, here: the core keeps none (each unlock brings its own).
    const {passphrase: givenPassphrase, ...baseKey} = options.key ?? {};
    const open = (key: CoreHostOptions["key"]) => openCoreHost({...options, key: {...baseKey, ...key}});
    let unlocked: CoreHost | undefined;
    if (storeKeyModeOf(options.database) !== "passphrase")
        // A new database is created with the passphrase given at start, if any (as the CLI does).
        unlocked = await open({...await keyWithoutPassphrase.key(), passphrase: givenPassphrase});
    else if (givenPassphrase != null)
        unlocked = await open({passphrase: givenPassphrase});
    const passphraseSet = storeKeyModeOf(options.database) === "passphrase";
    const service = new LockingCoreService({
        database: options.database, open, passphraseSet, withoutPassphrase: keyWithoutPassphrase, onUnlocked, onLocked, idleLockMs, unlocked,
        unlockBackoff: new UnlockBackoff({file: unlockBackoffFile(options.database), ...unlockBackoff})
    });
    return {service, opened: unlocked ?? null, locked: () => service.locked, dispose: () => service.dispose()};
}
