import {beforeEach, describe, expect, it, vi} from "vitest";
import type {CallResult} from "../../src/core/common/api/index.js";
import {LockingCoreService} from "../../src/core/node/host/LockingCoreService.js";
import type {CoreHost} from "../../src/core/node/host/openCoreHost.js";
import {CoreEventEmitter} from "../../src/core/node/rpc/CoreEventEmitter.js";

const minute = 60_000;

/**
 * A core host without a database or model: every call answers at once, except the ones the test
 * holds (`holdNextCall`); `settings.get` answers the saved `lockAfterMinutes`.
 */
function fakeHost({lockAfterMinutes = 15}: {lockAfterMinutes?: number} = {}) {
    const events = new CoreEventEmitter();
    let held: ((result: CallResult) => void) | null = null;
    let holdNext = false;
    const host = {
        closed: false as boolean,
        savedModelPath: null,
        modelsDir: "/nonexistent",
        core: null as never,
        service: {
            events,
            models: null as never,
            dispose: () => undefined,
            call: (method: string): Promise<CallResult> => {
                if (method === "settings.get")
                    return Promise.resolve({ok: true, value: {lockAfterMinutes}});
                if (holdNext) {
                    holdNext = false;
                    return new Promise((resolve) => {
                        held = resolve;
                    });
                }
                return Promise.resolve({ok: true, value: []});
            }
        },
        async dispose() {
            host.closed = true;
        }
    } satisfies CoreHost & {closed: boolean};
    return {
        host,
        events,
        holdNextCall: () => {
            holdNext = true;
        },
        releaseHeldCall: () => held?.({ok: true, value: []})
    };
}

/** A service with a passphrase, unlocked on `host`, and a promise of its next lock. */
function unlockedService(host: CoreHost, idleLockMs?: number | null) {
    let locked: () => void = () => undefined;
    const nextLock = new Promise<void>((resolve) => {
        locked = resolve;
    });
    const service = new LockingCoreService({
        database: "/nonexistent/fake.db",
        open: async () => host,
        passphraseSet: true,
        withoutPassphrase: {} as never,
        unlocked: host,
        onLocked: () => locked(),
        ...(idleLockMs !== undefined ? {idleLockMs} : {})
    });
    return {service, nextLock};
}

/** Lets `idleMs` of fake time pass and checks the app locks at its very end, not a millisecond before. */
async function expectLockAfter(service: LockingCoreService, nextLock: Promise<void>, idleMs: number) {
    await vi.advanceTimersByTimeAsync(idleMs - 1);
    expect(service.locked).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await nextLock;
    expect(service.locked).toBe(true);
}

beforeEach(() => {
    vi.useFakeTimers();
    return () => vi.useRealTimers();
});

describe("the idle lock", () => {
    it("locks the app after the idle time, not before: the core is closed and calls are refused with STORE_LOCKED", async () => {
        const {host} = fakeHost();
        const {service, nextLock} = unlockedService(host, 5 * minute);

        await vi.advanceTimersByTimeAsync(5 * minute - 1);
        expect(service.locked).toBe(false);
        expect(host.closed).toBe(false);

        await vi.advanceTimersByTimeAsync(1);
        await nextLock;
        expect(service.locked).toBe(true);
        expect(host.closed).toBe(true);
        expect(await service.call("conversations.list", {})).toMatchObject({ok: false, error: {code: "STORE_LOCKED"}});
    });

    it("a call resets the idle time", async () => {
        const {host} = fakeHost();
        const {service, nextLock} = unlockedService(host, 5 * minute);

        await vi.advanceTimersByTimeAsync(4 * minute);
        await service.call("conversations.list", {});
        await expectLockAfter(service, nextLock, 5 * minute);
    });

    it("never locks during a slow call: the idle time counts from when it ends", async () => {
        const fake = fakeHost();
        const {service, nextLock} = unlockedService(fake.host, 5 * minute);

        fake.holdNextCall();
        const slowCall = service.call("models.list", {});
        await vi.advanceTimersByTimeAsync(30 * minute);
        expect(service.locked).toBe(false);

        fake.releaseHeldCall();
        await expect(slowCall).resolves.toMatchObject({ok: true});
        await expectLockAfter(service, nextLock, 5 * minute);
    });

    it("never cuts a streaming reply: the idle time counts from the reply's end", async () => {
        const fake = fakeHost();
        const {service, nextLock} = unlockedService(fake.host, 5 * minute);

        fake.events.emit("turn.started", {conversationId: "story", assistantMessageId: 7} as never);
        await vi.advanceTimersByTimeAsync(30 * minute);
        expect(service.locked).toBe(false);

        fake.events.emit("turn.finished", {conversationId: "story"} as never);
        await expectLockAfter(service, nextLock, 5 * minute);
    });

    it("never cuts a request of the local API server: the idle time counts from when the last one ends", async () => {
        const fake = fakeHost();
        const {service, nextLock} = unlockedService(fake.host, 5 * minute);

        fake.events.emit("api.activity", {requestsInFlight: 1});
        fake.events.emit("api.activity", {requestsInFlight: 2});
        await vi.advanceTimersByTimeAsync(30 * minute);
        expect(service.locked).toBe(false);
        fake.events.emit("api.activity", {requestsInFlight: 1});
        await vi.advanceTimersByTimeAsync(30 * minute);
        expect(service.locked).toBe(false);

        fake.events.emit("api.activity", {requestsInFlight: 0});
        await expectLockAfter(service, nextLock, 5 * minute);
    });

    it("uses the saved 'lock after' minutes when none is forced, and a change to 0 turns the idle lock off", async () => {
        const {host} = fakeHost({lockAfterMinutes: 2});
        const {service, nextLock} = unlockedService(host);
        await vi.advanceTimersByTimeAsync(2 * minute);
        await nextLock;
        expect(service.locked).toBe(true);

        const neverLocks = fakeHost({lockAfterMinutes: 0});
        const second = unlockedService(neverLocks.host);
        await vi.advanceTimersByTimeAsync(24 * 60 * minute);
        expect(second.service.locked).toBe(false);
        expect(await second.service.call("app.lockState", {})).toMatchObject({ok: true, value: {locked: false, idleLockMs: null}});
    });

    it("locking while a reply streams tells the client that reply stopped because the app locked", async () => {
        const fake = fakeHost();
        const {service, nextLock} = unlockedService(fake.host, null);
        const errors: unknown[] = [];
        service.events.on("turn.error", (payload) => errors.push(payload));

        fake.events.emit("turn.started", {conversationId: "story", assistantMessageId: 7} as never);
        await service.call("app.lock", {});
        await nextLock;
        expect(errors).toEqual([{conversationId: "story", messageId: 7, error: expect.objectContaining({code: "STORE_LOCKED"})}]);
    });

    it("pushes the lock state to the pages (app.lockChanged) when the idle time locks the app and when the passphrase unlocks it", async () => {
        const {host} = fakeHost();
        const {service, nextLock} = unlockedService(host, 5 * minute);
        const pushed: unknown[] = [];
        service.events.on("app.lockChanged", (state) => pushed.push(state));

        await vi.advanceTimersByTimeAsync(5 * minute - 1);
        expect(pushed, "nothing before the idle time is up").toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        await nextLock;
        expect(pushed).toEqual([{locked: true, passphraseSet: true, idleLockMs: 5 * minute}]);

        expect(await service.call("app.unlock", {passphrase: "any passphrase the fake host opens with"})).toMatchObject({ok: true});
        expect(pushed.at(-1)).toEqual({locked: false, passphraseSet: true, idleLockMs: 5 * minute});
    });
});

describe("disposing the service", () => {
    it("closes its core once, however often it is disposed, and unlike a lock it cannot be undone: app.unlock is refused", async () => {
        const {host} = fakeHost();
        const closeHost = vi.spyOn(host, "dispose");
        const {service} = unlockedService(host, null);
        {
            await using scoped = service;
            expect(scoped.disposed).toBe(false);
        }
        await service.dispose();
        expect(closeHost).toHaveBeenCalledTimes(1);
        expect(service.disposed).toBe(true);
        expect(service.locked).toBe(true);
        expect(await service.call("app.unlock", {passphrase: "right"})).toMatchObject({ok: false, error: {code: "STORE_LOCKED"}});
        expect(closeHost).toHaveBeenCalledTimes(1);
    });
});
