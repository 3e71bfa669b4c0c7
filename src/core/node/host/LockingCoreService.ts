import type {EventRelayListenerHandle} from "lifecycle-utils";
import {CleanroomError, InvalidInputError, toWireError} from "../../common/errors.js";
import {coreCalls, defaultLockAfterMinutes, type AppSettings, type CallResult} from "../../common/api/index.js";
import {CoreEventEmitter} from "../rpc/CoreEventEmitter.js";
import type {ClientConnection, CoreService} from "../rpc/createCoreService.js";
import type {ModelStatusTracker} from "../models/ModelStatusTracker.js";
import {forgetDerivedKeys} from "../database/keys/deriveKey.js";
import {StoreLockedError} from "../database/keys/StoreLockedError.js";
import type {StoreKeySource} from "../database/keys/types.js";
import {DatabaseLock} from "../database/lock/DatabaseLock.js";
import type {CoreHost} from "./openCoreHost.js";
import {currentKeyFor, passphraseOperation, rekeyOpenDatabase, type KeyWithoutPassphrase} from "./rekeyOpenDatabase.js";
import {UnlockBackoff} from "../database/keys/UnlockBackoff.js";
import {describeZodIssues} from "../../common/describeZodIssues.js";

export type LockingCoreServiceOptions = {
    /** The database file (re-keyed by `app.setPassphrase`). */
    database: string,
    /** Opens the core on the database with `key`; WRONG_PASSPHRASE when a passphrase does not open it. */
    open: (key: StoreKeySource) => Promise<CoreHost>,
    /** Whether the database has a passphrase at start. */
    passphraseSet: boolean,
    /** The key without a passphrase: what opens the database when none is set, and what `app.setPassphrase` removing one switches to. */
    withoutPassphrase: KeyWithoutPassphrase,
    /** Runs after each unlock with the host just opened (a front end loads its startup model there). Defaults to nothing. */
    onUnlocked?: (host: CoreHost) => Promise<void> | void,
    /**
     * Runs after each lock (`app.lock` or the idle time), once the core is closed and clients were told of the replies it stopped.
     * A front end that ends the process holding the core there (web mode, the app) makes the lock leave nothing in memory. Defaults to nothing.
     */
    onLocked?: () => void,
    /**
     * Locks after this long with no call in flight and no reply streaming; null never. Overrides the
     * saved idle time (`lockAfterMinutes`, read at each unlock), as web mode's `--lock-after` does.
     * Defaults to the saved one.
     */
    idleLockMs?: number | null,
    /** A host already open (no passphrase, or one given at start). Required without a passphrase; with one, it starts locked without it. */
    unlocked?: CoreHost,
    /** The back-off of `app.unlock` after wrong passphrases. Defaults to one in memory (1 s doubling up to 5 min). */
    unlockBackoff?: UnlockBackoff
};

export const defaultIdleLockMs = defaultLockAfterMinutes * 60_000;

/**
 * The core's door in the app and web mode, and the app lock. Without a passphrase it passes every
 * call to its core and never locks. With one, locked, it holds no core, no open database, no
 * derived key and no decrypted text, and refuses every call but `app.lockState` and `app.unlock`
 * (STORE_LOCKED); `app.unlock` opens the core with the passphrase; `app.lock`, or the idle time,
 * closes it again (every session scrubbed, replies stopped, the database closed) and forgets the
 * key. Idle means no call in flight and no reply streaming: the idle time counts from when the last
 * of them ended, so the idle lock never cuts a reply. `app.setPassphrase` switches between the two
 * at run time (`rekeyOpenDatabase`). After a wrong passphrase `app.unlock` backs off (`UnlockBackoff`):
 * tried again too soon, it is refused unread with UNLOCK_BACKOFF and `retryAfterMs`. Events of the core it holds are passed on through its own
 * emitter, which outlives each unlock.
 */
export class LockingCoreService implements CoreService {
    public readonly events = new CoreEventEmitter();
    private readonly _options: LockingCoreServiceOptions;
    private readonly _unlockBackoff: UnlockBackoff;
    private _passphraseSet: boolean;
    private _savedIdleLockMs: number | null = defaultIdleLockMs;
    private _host: CoreHost | null = null;
    private _forwarding: EventRelayListenerHandle | null = null;
    private _idleTimer: NodeJS.Timeout | null = null;
    private _callsInFlight = 0;
    /** Conversations whose reply is streaming (between `turn.started` and `turn.finished` or `turn.error`), with the reply's message id. */
    private readonly _streaming = new Map<string, number | null>();
    /** Requests the local API server is answering in the open core (`api.activity`). */
    private _apiRequestsInFlight = 0;
    private _transition: Promise<void> = Promise.resolve();
    private _disposal: Promise<void> | null = null;

    public constructor(options: LockingCoreServiceOptions) {
        this._options = options;
        this._passphraseSet = options.passphraseSet;
        this._unlockBackoff = options.unlockBackoff ?? new UnlockBackoff();
        if (options.unlocked != null)
            this._attach(options.unlocked);
        else if (!options.passphraseSet)
            throw new Error("LockingCoreService: a database without a passphrase needs its core open from the start (`unlocked`).");
    }

    public get locked(): boolean {
        return this._host == null;
    }

    public get passphraseSet(): boolean {
        return this._passphraseSet;
    }

    /** The host open now (null while locked). */
    public get host(): CoreHost | null {
        return this._host;
    }

    /** The model status of the unlocked core; STORE_LOCKED while locked. */
    public get models(): ModelStatusTracker {
        if (this._host == null)
            throw new StoreLockedError("models");
        return this._host.service.models;
    }

    public async call(method: string, input: unknown, connection?: ClientConnection): Promise<CallResult> {
        try {
            if (method === "app.lockState")
                return {ok: true, value: this._lockState()};
            if (method === "app.setPassphrase")
                return {ok: true, value: await this._setPassphrase(input)};
            if (this._passphraseSet && method === "app.unlock")
                return {ok: true, value: await this._unlock(input)};
            if (this._passphraseSet && method === "app.lock") {
                await this.lock();
                return {ok: true, value: {locked: true}};
            }
            const host = this._host;
            if (host == null)
                throw new StoreLockedError(typeof method === "string" && method.length <= 100 ? method : "the call");
            const result = await this._whileBusy(() => host.service.call(method, input, connection));
            if (method === "settings.set" && result.ok)
                this._rememberIdleSetting(result.value as AppSettings);
            return result;
        } catch (error) {
            return {ok: false, error: toWireError(error)};
        }
    }

    /** A client's connection closed: what it held in the open core (uploads) goes. */
    public disconnected(connection: ClientConnection) {
        this._host?.service.disconnected?.(connection);
    }

    /** Locks now (see the class); a second call while locked does nothing, and so does a call without a passphrase. */
    public lock(): Promise<void> {
        return this._serialize(async () => {
            if (!this._passphraseSet)
                return;
            const interrupted = [...this._streaming];
            await this._closeHost();
            // The core's own end of these replies is not passed on once it is detached: the clients hear why they stopped.
            for (const [conversationId, messageId] of interrupted)
                this.events.emit("turn.error", {conversationId, messageId, error: new CleanroomError("STORE_LOCKED",
                    "Cleanroom locked while this reply was being generated: the reply was stopped, and what it had written is kept. Unlock to go on.",
                    {conversationId}).toWire()});
            this._emitLockChanged();
            this._options.onLocked?.();
        });
    }

    /**
     * Closes the core for good (the host shuts down: every session scrubbed, the database closed), after
     * any lock or unlock under way; `app.unlock` is refused from now on. Runs once; a second call waits for the first.
     * Unlike `lock`, which a later `app.unlock` undoes.
     */
    public dispose(): Promise<void> {
        this._disposal ??= this._serialize(() => this._closeHost());
        return this._disposal;
    }

    public get disposed(): boolean {
        return this._disposal != null;
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    private _lockState() {
        const state = {locked: this.locked, passphraseSet: this._passphraseSet, idleLockMs: this._passphraseSet ? this._idleLockMs : null};
        const unlockRetryAfterMs = this.locked && this._passphraseSet ? Math.ceil(this._unlockBackoff.retryAfterMs()) : 0;
        return unlockRetryAfterMs > 0 ? {...state, unlockRetryAfterMs} : state;
    }

    /** Pages show the lock screen, or the app, when this arrives: they do not poll `app.lockState`. */
    private _emitLockChanged() {
        this.events.emit("app.lockChanged", this._lockState());
    }

    private get _idleLockMs(): number | null {
        return this._options.idleLockMs !== undefined ? this._options.idleLockMs : this._savedIdleLockMs;
    }

    private async _closeHost() {
        const host = this._host;
        this._detach();
        try {
            await host?.dispose();
        } finally {
            forgetDerivedKeys();
        }
    }

    private async _unlock(input: unknown): Promise<{locked: false}> {
        const parsed = coreCalls["app.unlock"].input.safeParse(input);
        if (!parsed.success)
            throw new InvalidInputError("app.unlock", describeZodIssues(parsed.error.issues));
        await this._serialize(async () => {
            if (this.disposed)
                throw new CleanroomError("STORE_LOCKED", "Cleanroom is locked and this core is closing: unlock again once the page has reconnected.", {method: "app.unlock"});
            if (this._host != null)
                return;
            this._unlockBackoff.ensureMayTry();
            let host: CoreHost;
            try {
                host = await this._options.open({passphrase: parsed.data.passphrase});
            } catch (error) {
                if (error instanceof CleanroomError && error.code === "WRONG_PASSPHRASE") {
                    const retryAfterMs = this._unlockBackoff.recordFailure();
                    throw new CleanroomError("WRONG_PASSPHRASE", `${error.message} Try again in ${Math.ceil(retryAfterMs / 1000)} s.`,
                        {...error.details, retryAfterMs});
                }
                throw error;
            }
            this._unlockBackoff.recordSuccess();
            this._attach(host);
            this._emitLockChanged();
            await this._options.onUnlocked?.(host);
        });
        return {locked: false};
    }

    private async _setPassphrase(input: unknown): Promise<{passphraseSet: boolean}> {
        const parsed = coreCalls["app.setPassphrase"].input.safeParse(input);
        if (!parsed.success)
            throw new InvalidInputError("app.setPassphrase", describeZodIssues(parsed.error.issues));
        await this._serialize(async () => {
            const host = this._host;
            if (host == null)
                throw new StoreLockedError("app.setPassphrase");
            if (this.disposed)
                throw new CleanroomError("INVALID_INPUT", "The core is shutting down: the passphrase was not changed.");
            const change = {database: this._options.database, passphraseSet: this._passphraseSet, ...parsed.data, withoutPassphrase: this._options.withoutPassphrase};
            const currentKey = await currentKeyFor(change);
            // Refused (DATABASE_IN_USE) while another process has the database open: before the host is let go of, so it goes on as it was.
            const outcome = await DatabaseLock.of(change.database).exclusivelyAsync(passphraseOperation(change), async () => {
                this._detach();
                return await rekeyOpenDatabase(host, currentKey, change, this._options.open);
            });
            this._passphraseSet = outcome.passphraseSet;
            this._attach(outcome.host);
            this._emitLockChanged();
            if (outcome.failure != null)
                throw outcome.failure;
        });
        return {passphraseSet: this._passphraseSet};
    }

    private _attach(host: CoreHost) {
        this._host = host;
        this._forwarding = host.service.events.onAny((event, payload) => {
            this._trackStreaming(event, payload);
            this.events.emit(event, payload);
        });
        void host.service.call("settings.get", {}).then((result) => {
            if (result.ok && this._host === host)
                this._rememberIdleSetting(result.value as AppSettings);
        });
        this._restartIdleTimer();
    }

    private _detach() {
        this._host = null;
        this._streaming.clear();
        this._apiRequestsInFlight = 0;
        this._stopIdleTimer();
        this._forwarding?.dispose();
        this._forwarding = null;
    }

    private _rememberIdleSetting(settings: AppSettings) {
        this._savedIdleLockMs = settings.lockAfterMinutes === 0 ? null : settings.lockAfterMinutes * 60_000;
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
        if (event === "api.activity") {
            const requestsInFlight = (payload as {requestsInFlight?: unknown} | null)?.requestsInFlight;
            this._apiRequestsInFlight = typeof requestsInFlight === "number" ? requestsInFlight : 0;
            if (this._apiRequestsInFlight > 0)
                this._stopIdleTimer();
            else
                this._restartIdleTimer();
            return;
        }
        const conversationId = (payload as {conversationId?: unknown} | null)?.conversationId;
        if (typeof conversationId !== "string")
            return;
        if (event === "turn.started") {
            const messageId = (payload as {assistantMessageId?: unknown}).assistantMessageId;
            this._streaming.set(conversationId, typeof messageId === "number" ? messageId : null);
            this._stopIdleTimer();
        } else if (event === "turn.finished" || event === "turn.error") {
            this._streaming.delete(conversationId);
            this._restartIdleTimer();
        }
    }

    private get _busy() {
        return this._callsInFlight > 0 || this._streaming.size > 0 || this._apiRequestsInFlight > 0;
    }

    /** Unlock, lock and re-key run one at a time, in order. */
    private _serialize(work: () => Promise<void>): Promise<void> {
        const next = this._transition.then(work, work);
        this._transition = next.catch(() => undefined);
        return next;
    }

    /** The idle time starts again, from now, unless something is still going on (then it starts when the last of it ends). */
    private _restartIdleTimer() {
        this._stopIdleTimer();
        const idleLockMs = this._idleLockMs;
        if (!this._passphraseSet || idleLockMs == null || this._host == null || this._busy)
            return;
        this._idleTimer = setTimeout(() => {
            if (!this._busy)
                void this.lock();
        }, idleLockMs);
        this._idleTimer.unref();
    }

    private _stopIdleTimer() {
        if (this._idleTimer != null)
            clearTimeout(this._idleTimer);
        this._idleTimer = null;
    }
}
