import crypto from "node:crypto";
import {describe, expect, it} from "vitest";
import {associatedData, keyIdOf, openKvSnapshot, sealKvSnapshot, type KvSnapshotHeader} from "../../src/core/node/resume/sealKvSnapshot.js";
import {kvSnapshotKeyInfo} from "../../src/core/node/database/keys/snapshotKeys.js";

const header: KvSnapshotHeader = {model: "m 1 2", context: "cells 512", build: "prebuilt cpu", tokenCount: 3};
const key = Buffer.from(crypto.hkdfSync("sha256", crypto.randomBytes(32), Buffer.alloc(0), kvSnapshotKeyInfo, 32));
const state = crypto.randomBytes(4096);

describe("sealed KV snapshots (#25)", () => {
    it("open only with the same key, conversation, binding and untouched bytes", () => {
        const data = associatedData("conversation-a", header);
        const {nonce, sealed} = sealKvSnapshot(key, data, state);
        expect(sealed.includes(state.subarray(0, 64))).toBe(false);
        expect(openKvSnapshot(key, data, nonce, sealed)?.equals(state)).toBe(true);

        const flipped = Buffer.from(sealed);
        flipped[10]! ^= 1;
        expect(openKvSnapshot(key, data, nonce, flipped)).toBeNull();
        expect(openKvSnapshot(key, associatedData("conversation-b", header), nonce, sealed)).toBeNull();
        for (const change of [{model: "other"}, {context: "cells 384"}, {build: "local cpu"}, {tokenCount: 4}])
            expect(openKvSnapshot(key, associatedData("conversation-a", {...header, ...change}), nonce, sealed)).toBeNull();
        const otherKey = crypto.randomBytes(32);
        expect(openKvSnapshot(otherKey, data, nonce, sealed)).toBeNull();
        expect(keyIdOf(otherKey)).not.toBe(keyIdOf(key));
        expect(openKvSnapshot(key, data, nonce.subarray(0, 8), sealed)).toBeNull();
    });

    it("never reuses a nonce", () => {
        const data = associatedData("conversation-a", header);
        const nonces = new Set(Array.from({length: 100}, () => sealKvSnapshot(key, data, state).nonce.toString("hex")));
        expect(nonces.size).toBe(100);
    });
});
