import fs from "node:fs";
import path from "node:path";
import {zeroAndRemove} from "./keys/durableFiles.js";
import {envelopeFile, nextEnvelopeFile} from "./keys/keyEnvelope.js";
import {switchFiles} from "./keys/openKeyedDatabase.js";

export type WipeOptions = {
    /** The database file. */
    database: string,
    /** The models folder, whose `registry.json` (the registered-model records) goes too. Defaults to none. */
    modelsDir?: string,
    /** Also removes the model files downloaded into `modelsDir` (never files registered in place elsewhere). Defaults to `false`. */
    removeModelFiles?: boolean
};

/** One path `wipeStore` looked at: whether it was there and was removed, and whether anything remains there now. */
export type WipeCheck = {path: string, what: string, removed: boolean, remains: boolean};

export type WipeReport = {
    checks: WipeCheck[],
    /** Model files left in place (not asked to remove, or registered outside the models folder). */
    modelFilesKept: number,
    /** True when nothing it checked remains. */
    clean: boolean
};

/**
 * "Delete everything": the database (conversations, messages, audit trail, fingerprints and canary
 * hashes, settings), its WAL, shared-memory index and journal, its key files, any file a migration
 * or re-key left, and the registered-model records, each overwritten with zeros before it is
 * removed. Then each path is checked again, and the report says what was there and what remains.
 * The database must not be open in another process (its file would live on there until it closes).
 */
export function wipeStore({database, modelsDir, removeModelFiles = false}: WipeOptions): WipeReport {
    const file = path.resolve(database);
    const {encrypting, rekeyed, replaced} = switchFiles(file);
    const targets: Array<{path: string, what: string}> = [
        {path: file, what: "database (conversations, messages, audit, fingerprints, canary hashes, settings)"},
        ...["-wal", "-shm", "-journal"].map((suffix) => ({path: file + suffix, what: `database ${suffix.slice(1)} file`})),
        {path: envelopeFile(file), what: "database key file"},
        {path: nextEnvelopeFile(file), what: "database key file of a re-key"},
        ...[encrypting, rekeyed].flatMap((leftover) => ["", "-journal", "-wal", "-shm"].map((suffix) => ({path: leftover + suffix, what: "copy left by a migration or re-key"}))),
        {path: replaced, what: "database file a migration or re-key replaced"}
    ];
    let modelFilesKept = 0;
    if (modelsDir != null) {
        const registry = path.join(path.resolve(modelsDir), "registry.json");
        targets.push({path: registry, what: "registered-model records"});
        for (const entry of fs.existsSync(modelsDir) ? fs.readdirSync(modelsDir, {withFileTypes: true}) : []) {
            if (!entry.isFile() || entry.name === "registry.json")
                continue;
            if (removeModelFiles)
                targets.push({path: path.join(path.resolve(modelsDir), entry.name), what: "model file in the models folder"});
            else
                modelFilesKept++;
        }
    }

    const checks = targets.map(({path: target, what}) => {
        const existed = fs.statSync(target, {throwIfNoEntry: false})?.isFile() === true;
        if (existed)
            zeroAndRemove(target);
        return {path: target, what, removed: existed, remains: fs.existsSync(target)};
    });
    return {checks, modelFilesKept, clean: checks.every((check) => !check.remains)};
}
