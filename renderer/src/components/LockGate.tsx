import {useCallback, useEffect, useState, type ReactNode} from "react";
import {describeError} from "../describeError.js";
import {useCoreEvent} from "../hooks/useCoreEvent.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import type {AppLockState} from "../../../src/core/common/api/index.js";

/** The wait the core asks for before the next try (WRONG_PASSPHRASE and UNLOCK_BACKOFF carry `retryAfterMs`), or 0. */
function retryAfterMsOf(failure: unknown): number {
    const retryAfterMs = (failure as {details?: {retryAfterMs?: unknown}} | null)?.details?.retryAfterMs;
    return typeof retryAfterMs === "number" && retryAfterMs > 0 ? retryAfterMs : 0;
}

/** Seconds left until `retryAt` (ticking once a second while there are any), 0 when none. */
function useSecondsUntil(retryAt: number | null): number {
    const [now, setNow] = useState(() => Date.now());
    useEffect(() => {
        if (retryAt == null)
            return;
        setNow(Date.now());
        const timer = setInterval(() => {
            const current = Date.now();
            setNow(current);
            // Counted down: nothing changes until the next wait, so the lock screen stops waking the page four times a second.
            if (current >= retryAt)
                clearInterval(timer);
        }, 250);
        return () => clearInterval(timer);
    }, [retryAt]);
    return retryAt == null ? 0 : Math.max(0, Math.ceil((retryAt - now) / 1000));
}

/**
 * The app lock's screen. With a passphrase the core opens locked: this asks for the passphrase
 * and shows the app only once the core is unlocked. When the core locks (idle time, `app.lock`), it
 * says so (`app.lockChanged`) and the app is unmounted, so the page drops the decrypted text it showed too. After a wrong passphrase the core
 * backs off: the button is disabled and counts down the seconds it asks to wait.
 */
export function LockGate({client, children}: {client: AppCoreClient, children: ReactNode}) {
    const [state, setState] = useState<"checking" | "locked" | "unlocked">("checking");
    const [passphrase, setPassphrase] = useState("");
    const [error, setError] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const [retryAt, setRetryAt] = useState<number | null>(null);
    const waitSeconds = useSecondsUntil(retryAt);

    const apply = useCallback(({locked, unlockRetryAfterMs}: AppLockState) => {
        setState(locked ? "locked" : "unlocked");
        // A wait left by wrong passphrases (of an earlier page or run of the core): shown before any try.
        if (locked && unlockRetryAfterMs != null)
            setRetryAt(Date.now() + unlockRetryAfterMs);
    }, []);

    // A core that locks ends (web mode, the app) and the next one is the one to unlock: until the page is linked to it, Unlock waits.
    const [awaitingNextCore, setAwaitingNextCore] = useState(false);

    // Pushed by the core; asked once connected, and again when the core behind the page is a new one (reconnected, restarted).
    const check = useCallback(() => void client.call("app.lockState", {}).then((lockState) => {
        setAwaitingNextCore(false);
        apply(lockState);
    }, () => undefined), [client, apply]);
    useEffect(() => {
        if (client.connection === "connected")
            check();
        return client.onConnectionChange((connection) => {
            if (connection === "connected")
                check();
        });
    }, [client, check]);
    useCoreEvent(client, "core.status", (status) => {
        if (status.state === "restarted")
            check();
    });
    useCoreEvent(client, "app.lockChanged", (lockState) => {
        if (lockState.locked)
            setAwaitingNextCore(true);
        apply(lockState);
    });

    if (state === "unlocked")
        return <>{children}</>;
    if (state === "checking")
        return <main className="first-run" aria-label="Connecting" />;

    return (
        <main className="first-run" aria-label="Locked">
            <form className="first-run-card" onSubmit={(event) => {
                event.preventDefault();
                setBusy(true);
                setError(null);
                client.call("app.unlock", {passphrase}).then(() => {
                    setPassphrase("");
                    setState("unlocked");
                }, (failure: unknown) => {
                    setError(describeError(failure).detail);
                    const retryAfterMs = retryAfterMsOf(failure);
                    setRetryAt(retryAfterMs > 0 ? Date.now() + retryAfterMs : null);
                }).finally(() => setBusy(false));
            }}>
                <h1>Cleanroom is locked</h1>
                <p>Your conversations are encrypted with your passphrase. Enter it to unlock.</p>
                <input type="password" aria-label="Passphrase" autoFocus autoComplete="current-password" value={passphrase}
                    onChange={(event) => setPassphrase(event.target.value)} />
                <button type="submit" className="button button-primary" disabled={busy || passphrase === "" || waitSeconds > 0 || awaitingNextCore}>
                    {waitSeconds > 0 ? `Unlock (wait ${waitSeconds} s)` : "Unlock"}
                </button>
                {awaitingNextCore && <p role="status">Reconnecting to the core…</p>}
                {waitSeconds > 0 && <p role="status">After a wrong passphrase, the next try waits: {waitSeconds} s.</p>}
                {error != null && <p className="banner" role="alert">{error}</p>}
            </form>
        </main>
    );
}
