import type {SecretVault} from "../../common/secrets.js";

export type VaultMessage = {type: "vault", id: number, request: {op: "has" | "read" | "write", name: string, value?: string | null}};
export type VaultReply = {type: "vault-reply", id: number, ok: boolean, value?: unknown, error?: string};

/**
 * Secrets kept by the parent process (Electron main, which alone reaches the OS keychain
 * through safeStorage); this side only asks over the parent port.
 */
export class ParentPortSecretVault implements SecretVault {
    public readonly storage: string;
    public readonly warning: string | null;
    private readonly _post: (message: VaultMessage) => void;
    private readonly _pending = new Map<number, {resolve: (value: unknown) => void, reject: (error: Error) => void}>();
    private _nextId = 1;

    public constructor(post: (message: VaultMessage) => void, storage: string, warning: string | null) {
        this._post = post;
        this.storage = storage;
        this.warning = warning;
    }

    /** Feeds a reply from the parent. */
    public settle(reply: VaultReply) {
        const pending = this._pending.get(reply.id);
        if (pending == null)
            return;

        this._pending.delete(reply.id);
        if (reply.ok)
            pending.resolve(reply.value);
        else
            pending.reject(new Error(reply.error ?? "The key vault refused the request."));
    }

    public async has(name: string) {
        return await this._ask({op: "has", name}) === true;
    }

    public async read(name: string) {
        const value = await this._ask({op: "read", name});
        return typeof value === "string" ? value : null;
    }

    public async write(name: string, value: string | null) {
        await this._ask({op: "write", name, value});
    }

    private _ask(request: VaultMessage["request"]): Promise<unknown> {
        const id = this._nextId++;
        return new Promise((resolve, reject) => {
            this._pending.set(id, {resolve, reject});
            this._post({type: "vault", id, request});
        });
    }
}
