/** A table or column name that may be written into SQL unquoted. */
const plainIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type FullTextIndexOptions = {
    /** The table's INTEGER PRIMARY KEY column. Defaults to `"id"`. */
    rowid?: string
};

/**
 * The SQL of a full-text index over `table.column`, for a future migration: an external-content
 * FTS5 table `<table>_fts` inside the (encrypted) database, with `secure-delete` on (a deletion
 * removes the text's tokens from the index's pages instead of marking them deleted), the triggers
 * that keep it in step on insert, delete and update of the column, and a rebuild that indexes the
 * rows already there. Released migrations keep their own SQL byte for byte and never call this: a
 * change here must not change a database that is already migrated.
 */
export function fullTextIndexSql(table: string, column: string, {rowid = "id"}: FullTextIndexOptions = {}): string {
    for (const [what, name] of [["table", table], ["column", column], ["rowid column", rowid]] as const)
        if (!plainIdentifier.test(name))
            throw new Error(`fullTextIndexSql: the ${what} name ${JSON.stringify(name)} is not a plain SQL identifier (letters, digits and _, not starting with a digit)`);
    const index = `${table}_fts`;
    const removeOld = `INSERT INTO ${index} (${index}, rowid, ${column}) VALUES ('delete', old.${rowid}, old.${column});`;
    const addNew = `INSERT INTO ${index} (rowid, ${column}) VALUES (new.${rowid}, new.${column});`;
    return `
CREATE VIRTUAL TABLE ${index} USING fts5(
    ${column}, content = '${table}', content_rowid = '${rowid}', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO ${index} (${index}, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER ${index}_after_insert AFTER INSERT ON ${table} BEGIN
    ${addNew}
END;
CREATE TRIGGER ${index}_after_delete AFTER DELETE ON ${table} BEGIN
    ${removeOld}
END;
CREATE TRIGGER ${index}_after_update AFTER UPDATE OF ${column} ON ${table} BEGIN
    ${removeOld}
    ${addNew}
END;
INSERT INTO ${index} (${index}) VALUES ('rebuild');
`.trim();
}
