import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {fullTextIndexSql} from "../../src/core/node/database/fullTextIndexSql.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {tempDir} from "../helpers/tempCore.js";

describe("fullTextIndexSql, for future FTS5 migrations", () => {
    const closers: Array<() => void> = [];
    afterEach(() => closers.splice(0).forEach((close) => close()));

    const openWithNotes = () => {
        const db = openDatabase(path.join(tempDir("fts-helper"), "notes.db"), {key: {unencrypted: true}});
        closers.push(() => db.close());
        db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
        return db;
    };

    it("builds an index that finds what is inserted, forgets what is deleted or replaced, and indexes the rows already there", () => {
        const db = openWithNotes();
        db.prepare("INSERT INTO notes (body) VALUES (?)").run("written before the index: heron");
        db.exec(fullTextIndexSql("notes", "body"));
        const found = (word: string) => db.prepare("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid").pluck().all(`"${word}"`);

        const insert = db.prepare("INSERT INTO notes (body) VALUES (?)");
        insert.run("the café keeps a lantern");
        insert.run("the lantern is lit at dusk");
        expect(found("heron")).toEqual([1]);
        expect(found("lantern")).toEqual([2, 3]);
        expect(found("cafe"), "diacritics removed, as the store's indexes do").toEqual([2]);

        db.prepare("UPDATE notes SET body = ? WHERE id = 3").run("the candle is lit at dusk");
        db.prepare("DELETE FROM notes WHERE id = 1").run();
        expect(found("lantern")).toEqual([2]);
        expect(found("candle")).toEqual([3]);
        expect(found("heron")).toEqual([]);
        expect(db.prepare("SELECT v FROM notes_fts_config WHERE k = 'secure-delete'").pluck().get()).toBe(1);
        expect(() => db.prepare("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)").run(), "the index agrees with the table").not.toThrow();
    });

    it("refuses a name that is not a plain identifier, saying which", () => {
        expect(() => fullTextIndexSql("notes; DROP TABLE messages", "body"))
            .toThrow("fullTextIndexSql: the table name \"notes; DROP TABLE messages\" is not a plain SQL identifier (letters, digits and _, not starting with a digit)");
        expect(() => fullTextIndexSql("notes", "1body")).toThrow("the column name \"1body\"");
    });
});
