import type {LlamaContextOptions} from "node-llama-cpp";
import * as z from "zod";
import type {SettingsStore} from "../settings/SettingsStore.js";
import type {KvLayout} from "./KvStateFile.js";
import {settingKeys} from "../settings/settingKeys.js";

/** Bumped when what is learned, or how, changes: older entries are then left unused. */
const kvLayoutCacheVersion = 1;

const KvLayoutSchema = z.object({
    version: z.number().int().nonnegative(),
    vTransposed: z.boolean(),
    layers: z.array(z.object({
        kType: z.number().int(),
        kRowBytes: z.number().int().positive(),
        vType: z.number().int(),
        vCellBytes: z.number().int().positive(),
        vElementBytes: z.number().int().positive().optional(),
        vEmbd: z.number().int().positive().optional()
    })).min(1).max(4096),
    bytesPerCell: z.number().int().positive()
}).refine((layout) => layout.bytesPerCell === layout.layers.reduce((sum, layer) => sum + layer.kRowBytes + layer.vCellBytes, 0),
    "bytesPerCell is not the sum of the layers' K and V bytes");

const CachedKvLayoutSchema = z.object({
    layout: KvLayoutSchema,
    kvCells: z.number().int().positive(),
    fillToken: z.number().int().nonnegative(),
    learnedAt: z.number()
});

/** What `KvScrubber.learn` found, as kept between processes. */
export type CachedKvLayout = {layout: KvLayout, kvCells: number, fillToken: number, learnedAt: number};

/** What the cache key is made of: each changes what llama.cpp's KV cache looks like, or may. */
export type KvLayoutCacheKey = {
    /** `modelFingerprint` of the model file. */
    model: string,
    /** `machineFingerprint` of this machine. */
    machine: string,
    /** The llama.cpp binary (`describeLlamaBuild`). */
    backend: string,
    /** The options every conversation's context is created with (`threads` excepted: they change how fast, not what is stored). */
    contextOptions: LlamaContextOptions
};

/**
 * The KV layout `KvScrubber` learned for one model, context options, machine and llama.cpp build,
 * kept in the app's settings so that the next load skips the throwaway context. Nothing in it is
 * trusted: an entry that fails validation is ignored, and each scrub proves the layout again by
 * its own read-back (and discards an entry the read-back contradicts, see `KvScrubber`).
 */
export class KvLayoutCache {
    public readonly key: string;
    private readonly _settings: SettingsStore;

    public constructor(settings: SettingsStore, key: KvLayoutCacheKey) {
        this._settings = settings;
        const options = Object.entries(key.contextOptions).filter(([name, value]) => value != null && name !== "threads").sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)); // option names: ASCII, the same order as localeCompare's, without starting ICU
        this.key = settingKeys.kvLayout(kvLayoutCacheVersion, key, Object.fromEntries(options));
    }

    /** The entry, or null when there is none or it is not a well-formed one. */
    public read(): CachedKvLayout | null {
        const parsed = CachedKvLayoutSchema.safeParse(this._settings.get(this.key));
        return parsed.success ? parsed.data : null;
    }

    public write(entry: CachedKvLayout): void {
        this._settings.set(this.key, entry);
    }

    public discard(): void {
        this._settings.delete(this.key);
    }
}
