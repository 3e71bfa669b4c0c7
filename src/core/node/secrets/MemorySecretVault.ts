import type {SecretVault} from "../../common/secrets.js";

/** Secrets held in this process only and forgotten when it stops (web mode, tests). */
export class MemorySecretVault implements SecretVault {
    public readonly storage = "memory";
    public readonly warning = "Web mode keeps the cloud key in memory only: it is forgotten when the core stops.";
    private readonly _secrets = new Map<string, string>();

    public async has(name: string) {
        return this._secrets.has(name);
    }

    public async read(name: string) {
        return this._secrets.get(name) ?? null;
    }

    public async write(name: string, value: string | null) {
        if (value == null)
            this._secrets.delete(name);
        else
            this._secrets.set(name, value);
    }
}
