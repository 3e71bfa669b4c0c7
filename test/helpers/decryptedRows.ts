import {openDatabase} from "../../src/core/node/database/openDatabase.js";

/**
 * Every row of every ordinary table of the database, read through the store's key, as JSON text
 * per table: what the encrypted file holds (raw bytes alone prove little, they are encrypted).
 */
export function decryptedRows(database: string): Array<{table: string, json: string}> {
    const db = openDatabase(database, {readonly: true});
    try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'").all() as Array<{name: string}>;
        return tables.map(({name}) => ({table: name, json: JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all())}));
    } finally {
        db.close();
    }
}
