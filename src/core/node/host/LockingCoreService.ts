import type {EventRelayListenerHandle} from "lifecycle-utils";
import {InvalidInputError, toWireError} from "../../common/errors.js";
import {coreCalls, type CallResult} from "../../common/api/index.js";
import {CoreEventEmitter} from "../rpc/CoreEventEmitter.js";
import type {CoreService} from "../rpc/createCoreService.js";
import type {ModelStatusTracker} from "../rpc/ModelStatusTracker.js";
import {forgetDerivedKeys} from "../store/keys/deriveKey.js";
import {StoreLockedError} from "../store/keys/StoreLockedError.js";
import type {CoreHost} from "./openCoreHost.js";

export type LockingCoreServiceOptions = {
    /** Opens the core on the database with the passphrase (the unlock); WRONG_PASSPHRASE when it does not open it. */
    open: (passphrase: string) => Promise<CoreHost>,
    /** Runs after each unlock with the host just opened (a front end loads its startup model there). Defaults to nothing. */
    onUnlocked?: (host: CoreHost) => Promise<void> | void,
    /** Locks after this long with no call in flight and no reply streaming; null never. Defaults to `defaultIdleLockMs` (15 minutes). */
    idleLockMs?: number | null,
    /** A host already open (the passphrase was given at start): it starts unlocked. Defaults to none: it starts locked. */
    unlocked?: CoreHost
};

export const defaultIdleLockMs = 15 * 60_000;

/**
 * The door of a core whose database has a passphrase: the app lock. Locked, it holds no core, no
 * open database, no derived key and no decrypted text, and refuses every call but
 * `app.lockState` and `app.unlock` (STORE_LOCKED). `app.unlock` opens the core with the
 * passphrase; `app.lock`, or `idleLockMs` of idleness, closes it again (every session
 * scrubbed, replies stopped, the database closed) and forgets the key. Idle means no call in
 * flight and no reply streaming: the idle time counts from when the last of them ended, so the
 * idle lock never cuts a reply. Events of the core it holds are passed on through its own
 * emitter, which outlives each unlock.
 */
export class LockingCoreService implements CoreService {
    public readonly events = new CoreEventEmitter();
    private readonly _options: LockingCoreServiceOptions;
    private readonly _idleLockMs: number | null;
    private _host: CoreHost | null = null;
    private _forwarding: EventRelayListenerHandle | null = null;
    private _idleTimer: NodeJS.Timeout | null = null;
    private _callsInFlight = 0;
    /** Conversations whose reply is streaming (between `turn.started` and `turn.finished` or `turn.error`). */
    private readonly _streaming = new Set<string>();
    private _transition: Promise<void> = Promise.resolve();
    private _disposed = false;

    public constructor(options: LockingCoreServiceOptions) {
        this._options = options;
        this._idleLockMs = options.idleLockMs === undefined ? defaultIdleLockMs : options.idleLockMs;
        if (options.unlocked != null)
            this._attach(options.unlocked);
    }

    public get locked(): boolean {
        return this._host == null;
    }

    /** The model status of the unlocked core; STORE_LOCKED while locked. */
    public get models(): ModelStatusTracker {
        if (this._host == null)
            throw new StoreLockedError("models");
        return this._host.service.models;
    }

    public async call(method: string, input: unknown): Promise<CallResult> {
        try {
            if (method === "app.lockState")
                return {ok: true, value: {locked: this.locked, passphraseSet: true, idleLockMs: this._idleLockMs}};
            if (method === "app.unlock")
                return {ok: true, value: await this._unlock(input)};
            if (method === "app.lock") {
                await this.lock();
                return {ok: true, value: {locked: true}};
            }
            const host = this._host;
            if (host == null)
                throw new StoreLockedError(typeof method === "string" && method.length <= 100 ? method : "the call");
            return await this._whileBusy(() => host.service.call(method, input));
        } catch (error) {
            return {ok: false, error: toWireError(error)};
        }
    }

    /** Locks now (see the class); a second call while locked does nothing. */
    public lock(): Promise<void> {
        return this._serialize(async () => {
            const host = this._host;
            this._host = null;
            this._streaming.clear();
            this._stopIdleTimer();
            this._forwarding?.dispose();
            this._forwarding = null;
            try {
                await host?.close();
            } finally {
                forgetDerivedKeys();
            }
        });
    }

    public dispose(): void {
        if (this._disposed)
            return;
        this._disposed = true;
        void this.lock();
    }

    private async _unlock(input: unknown): Promise<{locked: false}> {
        const parsed = coreCalls["app.unlock"].input.safeParse(input);
        if (!parsed.success)
            throw new InvalidInputError("app.unlock", parsed.error.issues.map((issue) => issue.message));
        await this._serialize(async () => {
            if (this._host != null || this._disposed)
                return;
            const host = await this._options.open(parsed.data.passphrase);
            this._attach(host);
            await this._options.onUnlocked?.(host);
        });
        return {locked: false};
    }

    private _attach(host: CoreHost) {
        this._host = host;
        this._forwarding = host.service.events.onAny((event, payload) => {
            this._trackStreaming(event, payload);
            this.events.emit(event, payload);
        });
        this._restartIdleTimer();
    }

    private async _whileBusy(work: () => Promise<CallResult>): Promise<CallResult> {
        this._callsInFlight++;
        this._stopIdleTimer();
        try {
            return await work();
        } finally {
            this._callsInFlight--;
            this._restartIdleTimer();
        }
    }

    private _trackStreaming(event: string, payload: unknown) {
        const conversationId = (payload as {conversationId?: unknown} | null)?.conversationId;
        if (typeof conversationId !== "string")
            return;
        if (event === "turn.started") {
            this._streaming.add(conversationId);
            this._stopIdleTimer();
        } else if (event === "turn.finished" || event === "turn.error") {
            this._streaming.delete(conversationId);
            this._restartIdleTimer();
        }
    }

    private get _busy() {
        return this._callsInFlight > 0 || this._streaming.size > 0;
    }

    /** Unlock and lock run one at a time, in order. */
    private _serialize(work: () => Promise<void>): Promise<void> {
        const next = this._transition.then(work, work);
        this._transition = next.catch(() => undefined);
        return next;
    }

    /** The idle time starts again, from now, unless something is still going on (then it starts when the last of it ends). */
    private _restartIdleTimer() {
        this._stopIdleTimer();
        if (this._idleLockMs == null || this._host == null || this._busy)
            return;
        this._idleTimer = setTimeout(() => {
            if (!this._busy)
                void this.lock();
        }, this._idleLockMs);
        this._idleTimer.unref();
    }

    private _stopIdleTimer() {
        if (this._idleTimer != null)
            clearTimeout(this._idleTimer);
        this._idleTimer = null;
    }
}
