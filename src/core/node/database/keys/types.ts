/** What may open an encrypted database. Which one is needed, the database's key envelope says. */
export type StoreKeySource = {
    /** The passphrase the user gave (`CLEANROOM_PASSPHRASE`, a prompt, the app's unlock screen). Defaults to none. */
    passphrase?: string,
    /** The desktop app's random key, held by the OS keychain (`safeStorage`), 32 bytes. Defaults to none. */
    keychainKey?: Buffer,
    /**
     * Opens (or creates) the database without encryption. No front end does this: it exists for the
     * benchmark (the plain store's cost beside the encrypted one's) and for tests of SQLite's own
     * deletion mechanics, which hold for the decrypted pages alike. Defaults to `false`.
     */
    unencrypted?: boolean
};

/** How a database is keyed: by a passphrase, by the desktop app's keychain key, or by a random key in its key file (CLI and web mode without a passphrase). */
export type StoreKeyMode = "passphrase" | "keychain" | "device";
