import fs from "node:fs";
import path from "node:path";
import {safeStorage} from "electron";
import {writeFileDurably} from "../base/writeFileDurably.js";

export type VaultRequest = {op: "has" | "read" | "write", name: string, value?: string | null};

/**
 * Secrets encrypted with the OS keychain through `safeStorage`, kept in one file (mode 0600)
 * in the app's data folder. Only the main process can reach the keychain, so the core asks here.
 */
export class KeyVault {
    private readonly _file: string;

    public constructor(userDataDir: string) {
        this._file = path.join(userDataDir, "secrets.json");
    }

    /** "os-keychain", or the Linux backend's name; "basic_text" means obfuscated only. */
    public get storage(): string {
        if (!safeStorage.isEncryptionAvailable())
            return "unavailable";
        if (process.platform !== "linux")
            return "os-keychain";
        const backend = safeStorage.getSelectedStorageBackend();
        return backend === "basic_text" ? "basic_text" : `os-keychain (${backend})`;
    }

    public get warning(): string | null {
        const storage = this.storage;
        if (storage === "basic_text")
            return "No OS keychain was found (safeStorage uses basic_text): the cloud key is only obfuscated on disk, not encrypted.";
        if (storage === "unavailable")
            return "The OS keychain is unavailable: the cloud key cannot be stored.";
        return null;
    }

    public async handle(request: VaultRequest): Promise<boolean | string | null> {
        const secrets = this._readAll();
        if (request.op === "has")
            return secrets[request.name] != null;
        if (request.op === "read") {
            const encrypted = secrets[request.name];
            return encrypted == null ? null : safeStorage.decryptString(Buffer.from(encrypted, "base64"));
        }

        if (request.value == null)
            delete secrets[request.name];
        else {
            if (!safeStorage.isEncryptionAvailable())
                throw new Error("The OS keychain is unavailable: the key was not stored.");
            secrets[request.name] = safeStorage.encryptString(request.value).toString("base64");
        }
        // Through an exclusive, randomly named temporary file, then a rename: a link planted at the file or beside it is never written through.
        writeFileDurably(this._file, JSON.stringify(secrets));
        return true;
    }

    private _readAll(): Record<string, string> {
        try {
            return JSON.parse(fs.readFileSync(this._file, "utf8")) as Record<string, string>;
        } catch {
            return {};
        }
    }
}
