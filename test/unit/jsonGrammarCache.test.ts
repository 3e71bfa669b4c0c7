import {describe, expect, it} from "vitest";
import {JsonGrammarCache} from "../../src/core/node/serving/JsonGrammarCache.js";

const verdict = {type: "object", properties: {answer: {enum: ["yes", "no"]}}, required: ["answer"]};
const model = {name: "model A"};

/** A cache of fake grammars that counts its builds. */
function countingCache(options?: ConstructorParameters<typeof JsonGrammarCache>[0]) {
    const cache = new JsonGrammarCache<string, object>(options);
    let builds = 0;
    const get = (tenantId: string, schema: Record<string, unknown> | null, owner: object = model) =>
        cache.get(owner, tenantId, schema, async () => `grammar ${++builds} for ${JSON.stringify(schema)}`);
    return {cache, get, builds: () => builds};
}

describe("the JSON-schema grammar cache", () => {
    it("builds a tenant's grammar once per schema and gives it back for that tenant's next requests", async () => {
        const {get, builds} = countingCache();
        const first = await get("key-a", verdict);
        expect(await get("key-a", structuredClone(verdict))).toBe(first);
        expect(await get("key-a", null)).not.toBe(first);
        expect(builds()).toBe(2);
    });

    it("never hands one tenant's grammar to another, though the schema is the same (a hit would be faster: a timing side channel)", async () => {
        const {get, builds} = countingCache();
        const forA = await get("key-a", verdict);
        const forB = await get("key-b", verdict);
        expect(forB).not.toBe(forA);
        expect(builds()).toBe(2);
    });

    it("tells schemas apart by property order, which the reply must follow", async () => {
        const {get, builds} = countingCache();
        await get("key-a", {type: "object", properties: {a: {type: "string"}, b: {type: "string"}}});
        await get("key-a", {type: "object", properties: {b: {type: "string"}, a: {type: "string"}}});
        expect(builds()).toBe(2);
    });

    it("keeps at most maxEntries, the least recently used going first, and no schema longer than maxSchemaChars", async () => {
        const {cache, get, builds} = countingCache({maxEntries: 2, maxSchemaChars: 200});
        await get("key-a", {const: 1});
        await get("key-a", {const: 2});
        await get("key-a", {const: 1}); // used again: {const: 2} is now the least recent
        await get("key-a", {const: 3});
        expect(cache.size).toBe(2);
        await get("key-a", {const: 1});
        expect(builds()).toBe(3);
        await get("key-a", {const: 2});
        expect(builds()).toBe(4);

        const long = {description: "x".repeat(300)};
        await get("key-a", long);
        await get("key-a", long);
        expect(builds()).toBe(6);
    });

    it("forgets a revoked tenant's grammars only, everything on another model, and never keeps a build that failed", async () => {
        const {cache, get, builds} = countingCache();
        await get("key-a", verdict);
        await get("key-b", verdict);
        cache.forget("key-a");
        await get("key-b", verdict);
        expect(builds()).toBe(2);
        await get("key-a", verdict);
        expect(builds()).toBe(3);

        await get("key-b", verdict, {name: "model B"});
        expect(builds()).toBe(4);

        await expect(cache.get(model, "key-c", verdict, async () => {
            throw new Error("cannot be followed");
        })).rejects.toThrow("cannot be followed");
        await expect(cache.get(model, "key-c", verdict, async () => "built again")).resolves.toBe("built again");
    });
});
