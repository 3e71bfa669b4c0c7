/**
 * Where secrets (the cloud API key) are kept. Implemented per host: the OS keychain through
 * Electron's safeStorage in the desktop app, process memory in web mode.
 */
export interface SecretVault {
    /** e.g. "os-keychain", "basic_text" (obfuscated only), "memory" (forgotten when the core stops). */
    readonly storage: string;
    /** Shown to the user when the storage is weak, else null. */
    readonly warning: string | null;
    has(name: string): Promise<boolean>;
    read(name: string): Promise<string | null>;
    /** `null` forgets the secret. */
    write(name: string, value: string | null): Promise<void>;
}
