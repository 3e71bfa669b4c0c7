import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {CleanroomError} from "../../common/errors.js";
import {ModelCatalogSchema, type CatalogEntry} from "../../common/models.js";
import {describeZodIssues} from "../../common/describeZodIssues.js";

/**
 * `models/catalog.json` at the repository root: the nearest folder above this file that has one
 * beside a package.json (four folders up in the sources, two from the desktop app's bundled core
 * entry `out/core/utilityEntry.mjs`, three from the compiled CLI's `out/cli/<build>/`).
 */
export const defaultCatalogPath = findCatalog(path.dirname(fileURLToPath(import.meta.url)));

function findCatalog(from: string) {
    for (let folder = from; ; folder = path.dirname(folder)) {
        const candidate = path.join(folder, "models", "catalog.json");
        if (fs.existsSync(candidate) && fs.existsSync(path.join(folder, "package.json")))
            return candidate;
        if (path.dirname(folder) === folder)
            return fileURLToPath(new URL("../../../../models/catalog.json", import.meta.url));
    }
}

/** The recommended models, read from `models/catalog.json` and validated. */
export class ModelCatalog {
    public readonly path: string;
    public readonly entries: readonly CatalogEntry[];

    private constructor(catalogPath: string, entries: CatalogEntry[]) {
        this.path = catalogPath;
        this.entries = Object.freeze(entries);
    }

    /** Reads and validates the catalog. Throws `MODEL_CATALOG_INVALID` with the problems found. */
    public static load(catalogPath: string = defaultCatalogPath): ModelCatalog {
        let raw: unknown;
        try {
            raw = JSON.parse(fs.readFileSync(catalogPath, "utf8"));
        } catch (error) {
            throw new CleanroomError("MODEL_CATALOG_INVALID", `The model catalog ${catalogPath} could not be read: ${(error as Error).message}`,
                {path: catalogPath}, {cause: error});
        }
        const parsed = ModelCatalogSchema.safeParse(raw);
        if (!parsed.success)
            throw new CleanroomError("MODEL_CATALOG_INVALID", `The model catalog ${catalogPath} is invalid: ` +
                describeZodIssues(parsed.error.issues, {whole: "the catalog"}).join("; "), {path: catalogPath});

        const ids = new Set<string>();
        for (const entry of parsed.data.entries) {
            if (ids.has(entry.id))
                throw new CleanroomError("MODEL_CATALOG_INVALID", `The model catalog lists "${entry.id}" twice.`, {path: catalogPath, id: entry.id});
            ids.add(entry.id);
        }
        return new ModelCatalog(catalogPath, parsed.data.entries);
    }

    public get(id: string): CatalogEntry | undefined {
        return this.entries.find((entry) => entry.id === id);
    }

    /** The entry with this id, else `MODEL_NOT_FOUND` naming the ids there are. */
    public require(id: string): CatalogEntry {
        const entry = this.get(id);
        if (entry == null)
            throw new CleanroomError("MODEL_NOT_FOUND", `No catalog model "${id}". Catalog ids: ${this.entries.map((known) => known.id).join(", ")}.`, {id});
        return entry;
    }
}
