import path from "node:path";
import {describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import type {CachedKvLayout} from "../../src/core/node/engine/KvLayoutCache.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

/** A core on `database` with the test model loaded, as the CLI and the app open it. */
async function openCore(database: string, contextSize = 512) {
    const core = openTestCore(await loadLlama(), {database, engine: {threads: 1, contextSize, pool: {idleTimeoutMs: 0}}});
    await core.loadModel(modelPath!);
    return core;
}

function layoutEntries(core: Core) {
    return Object.entries(servicesOf(core).settings.all()).filter(([key]) => key.startsWith("kv.layout.")) as Array<[string, CachedKvLayout]>;
}

function loadedLayoutSource(core: Core) {
    return core.auditEvents({kinds: ["model.loaded"]}).at(-1)!.data.kvLayoutSource;
}

/** A turn holding a secret, then the end of its session: the scrub report. */
async function turnAndScrub(core: Core) {
    const conversation = core.createConversation();
    await core.sendMessage({conversationId: conversation.id, text: "The password is swordfish 4417. Once upon a time", maxTokens: 24, temperature: 0});
    return {conversationId: conversation.id, scrub: (await core.closeConversation(conversation.id))!};
}

/**
 * Layouts that are well formed but wrong for the model: each is caught by the scrub's own
 * read-back ("relearned" during that scrub), or a cell count by the first context ("learned" again before the turn).
 */
const contradictions: Array<{name: string, tamper: (entry: CachedKvLayout) => CachedKvLayout, scrubSource: string}> = [
    {name: "a K row twice as long", scrubSource: "relearned",
        tamper: (entry) => withLayers(entry, entry.layout.layers.map((layer, index) => index === 0 ? {...layer, kRowBytes: layer.kRowBytes * 2} : layer))},
    {name: "another K type", scrubSource: "relearned", tamper: (entry) => withLayers(entry, entry.layout.layers.map((layer) => ({...layer, kType: layer.kType === 1 ? 0 : 1})))},
    {name: "a layer fewer", scrubSource: "relearned", tamper: (entry) => withLayers(entry, entry.layout.layers.slice(1))},
    {name: "V transposed the other way", scrubSource: "relearned", tamper: (entry) => ({...entry, layout: {...entry.layout, vTransposed: !entry.layout.vTransposed}})},
    {name: "fewer KV cells", scrubSource: "learned", tamper: (entry) => ({...entry, kvCells: entry.kvCells - 256})}
];

function withLayers(entry: CachedKvLayout, layers: CachedKvLayout["layout"]["layers"]): CachedKvLayout {
    return {...entry, layout: {...entry.layout, layers, bytesPerCell: layers.reduce((sum, layer) => sum + layer.kRowBytes + layer.vCellBytes, 0)}};
}

describe.skipIf(modelPath == null)("the KV layout cache (KvScrubber's learn step, kept per model, context options, machine and build)", () => {
    it("a second load takes the layout from the cache, and every scrub still proves it byte by byte", async () => {
        const database = path.join(tempDir("kv-cache"), "app.db");
        const first = await openCore(database);
        let learned: Array<[string, CachedKvLayout]>;
        try {
            expect(loadedLayoutSource(first)).toBe("learned");
            learned = layoutEntries(first);
            expect(learned).toHaveLength(1);
            expect(learned[0]![1]).toMatchObject({kvCells: 512, layout: {bytesPerCell: first.modelInfo()!.kvBytesPerContext / 512}});
            expect((await turnAndScrub(first)).scrub).toMatchObject({verified: true, nonZeroBytes: 0, layoutSource: "learned"});
        } finally {
            await first.dispose();
        }

        const second = await openCore(database);
        try {
            expect(loadedLayoutSource(second)).toBe("cached");
            const {scrub} = await turnAndScrub(second);
            expect(scrub).toMatchObject({verified: true, nonZeroBytes: 0, kvCells: 512, cellsReadBack: 512, layoutSource: "cached"});
            expect(scrub.bytesChecked).toBe(second.modelInfo()!.kvBytesPerContext);
            expect(layoutEntries(second)).toEqual(learned);
        } finally {
            await second.dispose();
        }

        // Other context options: another entry, learned anew.
        const larger = await openCore(database, 1024);
        try {
            expect(loadedLayoutSource(larger)).toBe("learned");
            expect(layoutEntries(larger)).toHaveLength(2);
        } finally {
            await larger.dispose();
        }
    });

    for (const {name, tamper, scrubSource} of contradictions)
        it(`a cached layout the scrub contradicts (${name}) is discarded and learned again; the scrub is still verified`, async () => {
            const database = path.join(tempDir("kv-cache-wrong"), "app.db");
            const setup = await openCore(database);
            const [[key, correct]] = layoutEntries(setup) as [[string, CachedKvLayout]];
            servicesOf(setup).settings.set(key, tamper(correct));
            await setup.dispose();

            const core = await openCore(database);
            try {
                expect(loadedLayoutSource(core)).toBe("cached");
                const {scrub} = await turnAndScrub(core);
                expect(scrub).toMatchObject({verified: true, nonZeroBytes: 0, kvCells: 512, cellsReadBack: 512, layoutSource: scrubSource});
                expect(core.modelInfo()).toMatchObject({contextSize: 512});
                const discarded = core.auditEvents({kinds: ["kv.layout.discarded"]});
                expect(discarded).toHaveLength(1);
                expect(String(discarded[0]!.data.contradiction)).not.toBe("");
                expect(core.auditEvents({kinds: ["security.fault"]})).toEqual([]);
                // The entry holds what was learned again: the correct layout.
                expect(layoutEntries(core).map(([entryKey, entry]) => [entryKey, {...entry, learnedAt: 0}])).toEqual([[key, {...correct, learnedAt: 0}]]);
                // Later scrubs of this process use it.
                expect((await turnAndScrub(core)).scrub).toMatchObject({verified: true, layoutSource: "learned"});
            } finally {
                await core.dispose();
            }
        });

    it("an entry that is not a well-formed layout is ignored: the layout is learned", async () => {
        const database = path.join(tempDir("kv-cache-garbage"), "app.db");
        const setup = await openCore(database);
        const [[key]] = layoutEntries(setup) as [[string, CachedKvLayout]];
        servicesOf(setup).settings.set(key, {layout: {layers: "none"}, kvCells: -1});
        await setup.dispose();

        const core = await openCore(database);
        try {
            expect(loadedLayoutSource(core)).toBe("learned");
            expect((await turnAndScrub(core)).scrub).toMatchObject({verified: true, layoutSource: "learned"});
            expect(layoutEntries(core)[0]![1]).toMatchObject({kvCells: 512});
        } finally {
            await core.dispose();
        }
    });
});
