export type JsonGrammarCacheOptions = {
    /** Grammars kept, over every tenant; the least recently used goes first. Defaults to `64`. */
    maxEntries?: number,
    /** A schema longer than this (as JSON) is built for its request and not kept. Defaults to `256 KiB`. */
    maxSchemaChars?: number
};

const defaultMaxEntries = 64;
const defaultMaxSchemaChars = 256 * 1024;

type Entry<Grammar> = {tenantId: string, grammar: Promise<Grammar>};

/**
 * The JSON-schema grammars of `response_format` requests, built once per tenant and schema and
 * reused by that tenant's later requests with the same schema (a bounded LRU). A grammar holds
 * nothing but its schema, and is read-only while a reply is generated (the evaluation state is each
 * request's own), but a schema can be private (an enum of a client's own names), and a cache hit is
 * faster than a build: shared between tenants, the time of a request would tell one tenant whether
 * another sent that schema, the prefix cache's side channel again. So each tenant (API key id) has
 * its own entries. The cache follows one model: another model starts it empty.
 */
export class JsonGrammarCache<Grammar, Owner = unknown> {
    private readonly _maxEntries: number;
    private readonly _maxSchemaChars: number;
    /** Keyed by tenant id and schema JSON; the map's order is the use order (least recent first). */
    private readonly _entries = new Map<string, Entry<Grammar>>();
    private _owner: Owner | null = null;

    public constructor({maxEntries = defaultMaxEntries, maxSchemaChars = defaultMaxSchemaChars}: JsonGrammarCacheOptions = {}) {
        this._maxEntries = maxEntries;
        this._maxSchemaChars = maxSchemaChars;
    }

    public get size() {
        return this._entries.size;
    }

    /**
     * The tenant's grammar for `schema` (null: any JSON), built by `build` unless this tenant asked
     * for the same schema before under the same `owner` (the loaded model). A build that fails is not kept.
     */
    public async get(owner: Owner, tenantId: string, schema: Record<string, unknown> | null, build: () => Promise<Grammar>): Promise<Grammar> {
        if (owner !== this._owner) {
            this._entries.clear();
            this._owner = owner;
        }
        // Property order is kept: it is the order the grammar makes the reply follow.
        const schemaJson = JSON.stringify(schema);
        if (schemaJson.length > this._maxSchemaChars)
            return await build();
        const key = `${tenantId}\0${schemaJson}`;
        const found = this._entries.get(key);
        if (found != null) {
            this._entries.delete(key);
            this._entries.set(key, found);
            return await found.grammar;
        }
        const grammar = build();
        this._entries.set(key, {tenantId, grammar});
        grammar.catch(() => {
            if (this._entries.get(key)?.grammar === grammar)
                this._entries.delete(key);
        });
        while (this._entries.size > this._maxEntries)
            this._entries.delete(this._entries.keys().next().value!);
        return await grammar;
    }

    /** Forgets the grammars of one tenant (its key was revoked), or of every tenant. */
    public forget(tenantId?: string): void {
        for (const [key, entry] of this._entries)
            if (tenantId == null || entry.tenantId === tenantId)
                this._entries.delete(key);
    }
}
