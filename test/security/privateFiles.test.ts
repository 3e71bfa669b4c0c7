import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it, vi} from "vitest";
import {defaultDatabasePath} from "../../src/core/node/paths/appPaths.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {envelopeFile, newDeviceEnvelope, readEnvelope, writeEnvelope} from "../../src/core/node/database/keys/keyEnvelope.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {octalModeOf, usePermissiveUmask} from "../helpers/permissiveUmask.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * #27: files written safely, on real files under a permissive umask (0o022, as most desktops
 * have). The key file's temporary file is created exclusively under a random name, so a symbolic
 * link planted beside it is never followed; the key file, a new database and its -wal and -shm
 * are 0600 from their first byte; the folders the app creates are 0700.
 */

describe("private files under a permissive umask (0o022)", () => {
    usePermissiveUmask();
    afterEach(() => {
        vi.restoreAllMocks();
        vi.unstubAllEnvs();
    });

    /** A file of the attacker's choosing, and links to it planted where a writer might put its temporary file. */
    function plantLinks(file: string, names: string[]) {
        const victim = path.join(path.dirname(file), "attacker-chosen.txt");
        fs.writeFileSync(victim, "untouched\n", {mode: 0o644});
        for (const name of names)
            fs.symlinkSync(victim, name);
        return {
            victim,
            expectUntouched() {
                expect(fs.readFileSync(victim, "utf8")).toBe("untouched\n");
                expect(octalModeOf(victim)).toBe("0644");
                for (const name of names) {
                    expect(fs.lstatSync(name).isSymbolicLink()).toBe(true);
                    expect(fs.readlinkSync(name)).toBe(victim);
                }
            }
        };
    }

    it("the device key is never written through a link planted at the old predictable temporary name or at plausible ones", () => {
        const database = path.join(tempDir("planted-links"), "cleanroom.db");
        const keyFile = envelopeFile(database);
        const planted = plantLinks(keyFile, [
            `${keyFile}.${process.pid}.tmp`, // the name before: <file>.<pid>.tmp
            `${keyFile}.tmp`, `${keyFile}.${process.pid + 1}.tmp`, `${keyFile}~`, `${keyFile}.new`
        ]);
        const envelope = newDeviceEnvelope();
        writeEnvelope(keyFile, envelope);

        planted.expectUntouched();
        expect(fs.lstatSync(keyFile).isFile()).toBe(true);
        expect(octalModeOf(keyFile)).toBe("0600");
        expect(readEnvelope(keyFile)).toEqual(envelope);
        // Nothing else left beside it: the temporary file was renamed into place.
        expect(fs.readdirSync(path.dirname(keyFile)).filter((name) => name.endsWith(".tmp")).sort())
            .toEqual([`cleanroom.db-key.json.${process.pid}.tmp`, `cleanroom.db-key.json.${process.pid + 1}.tmp`, "cleanroom.db-key.json.tmp"].sort());
    });

    it("even a link at the exact temporary name (random bytes foreseen) is refused, not followed; a link at the key file's own name is replaced, not followed", () => {
        const dir = tempDir("foreseen-name");
        const keyFile = path.join(dir, "cleanroom.db-key.json");
        const foreseen = Buffer.alloc(8, 0xab);
        vi.spyOn(crypto, "randomBytes").mockImplementation(() => Buffer.from(foreseen));
        const temporary = `${keyFile}.${process.pid}.${foreseen.toString("hex")}.tmp`;
        const planted = plantLinks(keyFile, [temporary]);

        expect(() => writeEnvelope(keyFile, newDeviceEnvelope())).toThrow(expect.objectContaining({code: "EEXIST"}));
        planted.expectUntouched();
        expect(fs.existsSync(keyFile)).toBe(false);

        vi.restoreAllMocks();
        fs.symlinkSync(planted.victim, keyFile);
        writeEnvelope(keyFile, newDeviceEnvelope());
        planted.expectUntouched();
        expect(fs.lstatSync(keyFile).isSymbolicLink()).toBe(false);
        expect(octalModeOf(keyFile)).toBe("0600");
    });

    it("a new database, its key file, and its -wal and -shm after a write are 0600; the app's home and every folder it creates are 0700", () => {
        const base = tempDir("private-home");
        vi.stubEnv("CLEANROOM_HOME", path.join(base, "nested", "cleanroom-home"));
        const database = defaultDatabasePath();
        expect(fs.existsSync(path.dirname(database))).toBe(false);

        const db = openDatabase(database);
        try {
            db.prepare("INSERT INTO settings (key, value_json) VALUES (?, ?)").run("privacy-check", JSON.stringify("on"));
            const modes = Object.fromEntries(["", "-key.json", "-wal", "-shm"].map((suffix) => [`cleanroom.db${suffix}`, octalModeOf(database + suffix)]));
            console.log(`[private files] under umask 0022: ${JSON.stringify(modes)}`);
            expect(modes).toEqual({"cleanroom.db": "0600", "cleanroom.db-key.json": "0600", "cleanroom.db-wal": "0600", "cleanroom.db-shm": "0600"});
        } finally {
            db.close();
        }
        for (const folder of [path.join(base, "nested"), path.join(base, "nested", "cleanroom-home")])
            expect(octalModeOf(folder)).toBe("0700");
    });

    it("the scrub's scratch folder is 0700", () => {
        const scratch = PrivateScratchDir.create(tempDir("scratch-parent"));
        try {
            expect(octalModeOf(scratch.path)).toBe("0700");
        } finally {
            scratch.dispose();
        }
    });
});
