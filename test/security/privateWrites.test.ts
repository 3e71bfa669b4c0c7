import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it, vi} from "vitest";
import {recentFetchFailure, recordFetchFailure} from "../../src/launch/desktopFetchRecord.js";
import {KeyVault} from "../../src/main/KeyVault.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {octalModeOf, usePermissiveUmask} from "../helpers/permissiveUmask.js";
import {tempDir} from "../helpers/tempCore.js";

// Electron cannot run here: its safeStorage, as an OS keychain would be (a reversible stand-in, so what was stored can be read back).
vi.mock("electron", () => ({
    safeStorage: {
        isEncryptionAvailable: () => true,
        getSelectedStorageBackend: () => "gnome_libsecret",
        encryptString: (text: string) => Buffer.from(`sealed:${text}`),
        decryptString: (sealed: Buffer) => sealed.toString("utf8").replace(/^sealed:/, "")
    }
}));


/** A file of someone else's choosing, with a symbolic link to it planted at `at` and at the old temporary names beside it. */
function plantLink(at: string) {
    const victim = path.join(path.dirname(at), "attacker-chosen.txt");
    fs.writeFileSync(victim, "untouched\n", {mode: 0o644});
    const links = [at, `${at}.tmp`, `${at}.${process.pid}.tmp`];
    for (const link of links)
        fs.symlinkSync(victim, link);
    return () => {
        expect(fs.readFileSync(victim, "utf8")).toBe("untouched\n");
        expect(octalModeOf(victim)).toBe("0644");
    };
}

/**
 * The leftovers of the file-safety work (#27), under a permissive umask: the desktop app's secrets
 * file and `npm start`'s fetch record go through an exclusive random temporary file (0600) and a
 * rename, never through a planted link; files an older version left 0644 are made 0600 on open.
 */
describe("private writes outside the store, and old files made private", () => {
    usePermissiveUmask();
    afterEach(() => {
        vi.unstubAllEnvs();
    });

    it("KeyVault (Electron main) never writes its secrets through a link planted at secrets.json; the file is 0600", async () => {
        const dir = tempDir("key-vault");
        const secrets = path.join(dir, "secrets.json");
        const expectUntouched = plantLink(secrets);
        const vault = new KeyVault(dir);
        expect(await vault.handle({op: "write", name: "cloud-key", value: "sk-test-value"})).toBe(true);

        expectUntouched();
        expect(fs.lstatSync(secrets).isFile()).toBe(true);
        expect(octalModeOf(secrets)).toBe("0600");
        expect(await vault.handle({op: "read", name: "cloud-key"})).toBe("sk-test-value");
        // Nothing else beside it: the temporary file was renamed into place.
        expect(fs.readdirSync(dir).sort()).toEqual(["attacker-chosen.txt", "secrets.json", `secrets.json.${process.pid}.tmp`, "secrets.json.tmp"].sort());
    });

    it("the desktop fetch record is 0600 and never written through a planted link", () => {
        const home = tempDir("fetch-record");
        vi.stubEnv("CLEANROOM_HOME", home);
        const record = path.join(home, "desktop-fetch-failed.json");
        recordFetchFailure("first failure");
        expect(octalModeOf(record)).toBe("0600");
        expect(recentFetchFailure()).toMatchObject({reason: "first failure"});

        fs.rmSync(record);
        const expectUntouched = plantLink(record);
        recordFetchFailure("second failure");
        expectUntouched();
        expect(fs.lstatSync(record).isFile()).toBe(true);
        expect(octalModeOf(record)).toBe("0600");
        expect(recentFetchFailure()).toMatchObject({reason: "second failure"});
    });

    it("a database, its -wal, -shm and key file left 0644 by an older version are 0600 once opened", () => {
        const database = path.join(tempDir("old-modes"), "cleanroom.db");
        const files = ["", "-wal", "-shm", "-key.json"].map((suffix) => database + suffix);
        const writer = openDatabase(database);
        try {
            writer.prepare("INSERT INTO settings (key, value_json) VALUES (?, ?)").run("old", JSON.stringify("modes"));
            // As a version before #27 left them (SQLite's 0644 less the umask), the database still open there.
            for (const file of files)
                fs.chmodSync(file, 0o644);

            const reader = openDatabase(database);
            try {
                expect(reader.prepare("SELECT value_json FROM settings WHERE key = 'old'").get()).toEqual({value_json: "\"modes\""});
            } finally {
                reader.close();
            }
            expect(Object.fromEntries(files.map((file) => [path.basename(file), octalModeOf(file)]))).toEqual({
                "cleanroom.db": "0600", "cleanroom.db-wal": "0600", "cleanroom.db-shm": "0600", "cleanroom.db-key.json": "0600"
            });
        } finally {
            writer.close();
        }
    });
});
