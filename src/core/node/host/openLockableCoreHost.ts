import type {CoreService} from "../rpc/createCoreService.js";
import {storeKeyModeOf} from "../store/keys/storeKeyModeOf.js";
import {LockingCoreService} from "./LockingCoreService.js";
import {openCoreHost, type CoreHost, type CoreHostOptions} from "./openCoreHost.js";

export type LockableCoreHostOptions = CoreHostOptions & {
    /** Locks a passphrase-protected core after this long without a call; null never. Defaults to `LockingCoreService`'s 15 minutes. */
    idleLockMs?: number | null,
    /** Runs after each unlock with the core just opened (the core open at start is `LockableCoreHost.opened`). */
    onUnlocked?: (host: CoreHost) => Promise<void> | void
};

export type LockableCoreHost = {
    service: CoreService,
    /** The core open from the start (no passphrase, or one given at start); null when it starts locked. */
    opened: CoreHost | null,
    locked: () => boolean,
    close(): Promise<void>
};

/**
 * The core of the app and web mode. Without a passphrase it is `openCoreHost`'s, never locked.
 * With one, the app lock (`LockingCoreService`): it opens locked unless `key.passphrase` was
 * given (then a wrong one fails here, as in the CLI), and `app.unlock` opens the core.
 */
export async function openLockableCoreHost({idleLockMs, onUnlocked, ...options}: LockableCoreHostOptions): Promise<LockableCoreHost> {
    if (storeKeyModeOf(options.database) !== "passphrase") {
        const host = await openCoreHost(options);
        return {service: host.service, opened: host, locked: () => false, close: host.close};
    }
    const unlocked = options.key?.passphrase != null ? await openCoreHost(options) : undefined;
    const service = new LockingCoreService({
        open: (passphrase) => openCoreHost({...options, key: {...options.key, passphrase}}),
        onUnlocked,
        idleLockMs,
        unlocked
    });
    return {service, opened: unlocked ?? null, locked: () => service.locked, close: () => service.lock()};
}
