import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {DatabaseLock} from "../../src/core/node/database/lock/DatabaseLock.js";
import {tempDir} from "../helpers/tempCore.js";

/** #27: a process that opens the database through a symbolic link must meet the one that opens it by its real name. */
describe("the database lock's file", () => {
    it("is the same whether the database is named by its real path, through a linked folder or through a linked file", () => {
        const realDir = tempDir("lock-real");
        const database = path.join(realDir, "app.db");
        fs.writeFileSync(database, "");
        const linkedFolder = path.join(tempDir("lock-folder-link"), "linked");
        fs.symlinkSync(realDir, linkedFolder);
        const linkedFile = path.join(tempDir("lock-file-link"), "other-name.db");
        fs.symlinkSync(database, linkedFile);

        const expected = DatabaseLock.of(database).files.hold;
        expect(expected).toBe(path.join(fs.realpathSync(realDir), "app.db.lock"));
        expect(DatabaseLock.of(path.join(linkedFolder, "app.db")).files.hold).toBe(expected);
        expect(DatabaseLock.of(linkedFile).files.hold).toBe(expected);
    });
});
