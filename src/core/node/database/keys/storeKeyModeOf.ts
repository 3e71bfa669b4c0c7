import fs from "node:fs";
import path from "node:path";
import {envelopeFile, readEnvelope} from "./keyEnvelope.js";
import {isPlainDatabase} from "./openKeyedDatabase.js";
import type {StoreKeyMode} from "./types.js";

/** How the database at `database` is keyed: `none` when there is no database yet, `plain` when it is from before encryption at rest. */
export function storeKeyModeOf(database: string): StoreKeyMode | "plain" | "none" {
    const file = path.resolve(database);
    let stat;
    try {
        stat = fs.statSync(file, {throwIfNoEntry: false});
    } catch {
        return "none"; // a path that cannot hold a database: opening it says why
    }
    if (stat == null || !stat.isFile() || stat.size === 0)
        return "none";
    if (isPlainDatabase(file))
        return "plain";
    return readEnvelope(envelopeFile(file))?.mode ?? "device";
}
