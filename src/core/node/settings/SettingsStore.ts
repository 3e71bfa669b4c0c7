import type Database from "better-sqlite3-multiple-ciphers";

/** App-wide settings as JSON values under string keys. */
export class SettingsStore {
    private readonly _db: Database.Database;

    public constructor(db: Database.Database) {
        this._db = db;
    }

    public get<T>(key: string): T | undefined {
        const row = this._db.prepare("SELECT value_json FROM settings WHERE key = ?").get(key) as {value_json: string} | undefined;
        return row == null ? undefined : JSON.parse(row.value_json) as T;
    }

    public set(key: string, value: unknown): void {
        this._db.prepare("INSERT INTO settings (key, value_json) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json")
            .run(key, JSON.stringify(value));
    }

    public delete(key: string): void {
        this._db.prepare("DELETE FROM settings WHERE key = ?").run(key);
    }

    public all(): Record<string, unknown> {
        const rows = this._db.prepare("SELECT key, value_json FROM settings ORDER BY key").all() as Array<{key: string, value_json: string}>;
        return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value_json)]));
    }
}
