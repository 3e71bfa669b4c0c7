import fs from "node:fs";
import os from "node:os";
import * as z from "zod";
import type {Llama} from "node-llama-cpp";
import {settingKeys} from "../settings/settingKeys.js";
import type {SettingsStore} from "../settings/SettingsStore.js";
import {describeLlamaBuild} from "./describeLlamaBuild.js";
import {checkModelFitsMemory, validateModelFile, type ModelFileFacts, type ValidateModelOptions} from "./validateModelFile.js";
import {fileIdentity} from "./fileIdentity.js";

/** Bumped when `validateModelFile` checks more: files validated by older checks are then checked again. */
const validationVersion = 1;

/** What a load needs of a validated file: `validateModelFile`'s facts without node-llama-cpp's insights object. */
export type CheckedModelFile = Omit<ModelFileFacts, "insights">;

const RememberedValidationSchema = z.object({
    identity: z.string(),
    llamaBuild: z.string(),
    facts: z.object({
        fileBytes: z.number().nonnegative(),
        architecture: z.string().min(1),
        trainContextSize: z.number().nullable(),
        layers: z.number(),
        parameters: z.number(),
        tensorBytes: z.number(),
        estimatedRamBytes: z.number()
    })
});

/**
 * `validateModelFile`, remembered per model file in the app's settings: while the file is the same
 * one, unchanged (device, inode, size, modification and change times in ns: any write or replacement
 * changes the change time, which cannot be set back) and the llama.cpp build the same, a load skips
 * re-parsing its header (#25 item 1); the memory check is made again each time. A file that changed
 * within the last `modelValidationSettleMs` is checked every time. Any other file, or
 * one that changed, is checked in full, so a damaged file is refused with its specific error.
 */
export async function validateModelFileRemembered(
    llama: Llama, modelPath: string, settings: SettingsStore | null, options: ValidateModelOptions = {}
): Promise<CheckedModelFile> {
    if (settings == null)
        return await validateModelFile(llama, modelPath, options);
    const key = settingKeys.modelValidation(validationVersion, modelPath);
    const llamaBuild = describeLlamaBuild(llama);
    // Taken before the check: a file that changes while it is checked no longer matches what is stored.
    const identity = settledFileIdentity(modelPath);
    const remembered = RememberedValidationSchema.safeParse(settings.get(key));
    if (identity != null && remembered.success && remembered.data.identity === identity && remembered.data.llamaBuild === llamaBuild) {
        const facts = remembered.data.facts;
        checkModelFitsMemory(modelPath, facts.estimatedRamBytes, options.totalMemoryBytes ?? os.totalmem());
        return {path: modelPath, ...facts};
    }

    const {insights: _insights, path: _path, ...facts} = await validateModelFile(llama, modelPath, options);
    if (identity != null)
        settings.set(key, {identity, llamaBuild, facts} satisfies z.infer<typeof RememberedValidationSchema>);
    return {path: modelPath, ...facts};
}

/**
 * A file changed less than this long before it is checked is not remembered: the kernel's timestamps
 * can be as coarse as a clock tick, so a same-size rewrite right after the check could keep every field.
 */
export const modelValidationSettleMs = 1000;

/** Null when the path is no regular file (`validateModelFile` then says so), or when it changed too recently to be told apart from its next change. */
function settledFileIdentity(modelPath: string): string | null {
    let stat: fs.BigIntStats | undefined;
    try {
        stat = fs.statSync(modelPath, {bigint: true, throwIfNoEntry: false});
    } catch {
        return null;
    }
    if (stat == null || !stat.isFile() || Date.now() - Number(stat.ctimeMs) < modelValidationSettleMs)
        return null;
    return fileIdentity(stat);
}
