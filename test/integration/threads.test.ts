import os from "node:os";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {describeLlamaBuild} from "../../src/core/node/engine/describeLlamaBuild.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {startupThreadpoolSize} from "../../src/core/node/engine/startupThreadpoolSize.js";
import {machineFingerprint, measureThreads, modelFingerprint, pickBestThreads, threadTunerVersion} from "../../src/core/node/engine/ThreadTuner.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("thread tuning", () => {
    it("cuts a thread count far slower than the best short, tries no larger one, and keeps the faster", async () => {
        const model = await (await loadLlama()).loadModel({modelPath: modelPath!});
        try {
            // Many more threads than cores: each decode waits on threads that have no core to run on.
            const oversubscribed = Math.min(256, 16 * os.availableParallelism());
            const measurements = await measureThreads(model, {candidates: [1, oversubscribed, 256], tokens: 48});

            expect(measurements.map((measurement) => measurement.threads)).toEqual([1, oversubscribed]);
            expect(measurements[0]).toMatchObject({stopped: "tokens", tokens: 48});
            expect(measurements[1]!.stopped).toBe("slower");
            expect(measurements[1]!.tokens).toBeLessThan(48);
            expect(pickBestThreads(measurements)).toBe(1);
        } finally {
            await model.dispose();
        }
    });

    it("stores a tuning per model, machine, llama.cpp build, libuv pool and tuner version, and measures again over one an older tuner stored", async () => {
        const database = path.join(tempDir("threads"), "threads.db");
        const llama = await loadLlama();
        const create = () => openTestCore(llama, {database, engine: {contextSize: 512, pool: {idleTimeoutMs: 0}}});
        const open = async () => {
            const core = create();
            return {core, info: await core.loadModel(modelPath!)};
        };

        // What the previous tuner stored, before the build and its version were part of the key.
        const staleKey = `threads.tuned:${modelFingerprint(modelPath!)}:${machineFingerprint()}`;
        const seeded = create();
        servicesOf(seeded).settings.set(staleKey, {threads: 7, measurements: [{threads: 7, tokensPerSecond: 1e9, tokens: 48}]});
        await seeded.dispose();

        const measured = await open();
        try {
            expect(measured.info.threadsSource).toBe("tuned");
            expect(measured.info.threads).not.toBe(7);
            expect(measured.info.llamaBuild).toBe(describeLlamaBuild(llama));
            const backend = `${describeLlamaBuild(llama)} pool ${startupThreadpoolSize()}`;
            const key = `threads.tuned.v${threadTunerVersion}:${modelFingerprint(modelPath!)}:${machineFingerprint()}:${backend}`;
            expect(servicesOf(measured.core).settings.get(key)).toMatchObject({threads: measured.info.threads, backend});
            expect(measured.core.auditEvents({kinds: ["threads.tuned"]}).at(-1)!.data).toMatchObject({backend});
        } finally {
            await measured.core.dispose();
        }

        const cached = await open();
        try {
            expect(cached.info).toMatchObject({threadsSource: "cached", threads: measured.info.threads});
        } finally {
            await cached.core.dispose();
        }
    });
});
