import fc from "fast-check";
import {afterAll, describe, expect, it} from "vitest";
import type * as z from "zod";
import {coreEvents} from "../../src/core/common/api/index.js";
import {connectCoreClient, createInProcessChannelPair} from "../../src/core/common/rpc/index.js";
import {CoreEventEmitter} from "../../src/core/node/rpc/CoreEventEmitter.js";
import type {CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {clearlyWrongFor, isObjectLike, isOptional, nestedArrays, objectShape, prototypeKeys, validArbitrary, withJsonKey, wrongValue} from "./helpers/contractArbitraries.js";
import {SeededRandom} from "./helpers/seededRandom.js";

/**
 * Claim: every event payload schema of the contract refuses what it must (a non-object, a
 * required field missing, a field of a type it never takes) and never throws, whatever it is
 * fed: 10,000 generated payloads per event, read from the contract object so a new event is
 * covered without editing this file.
 *
 * What is fuzzed is the schema itself: connectCoreClient (used by the preload and by the web
 * renderer) hands payloads to subscribers only after checking them against it (the last test below).
 *
 * Replay a run with CLEANROOM_FUZZ_SEED=<seed printed below>.
 */
const seed = SeededRandom.runSeed();
const runsPerEvent = 10_000;
type Tally = {inputs: number, refused: number, accepted: number, crashes: number, byCategory: Record<string, number>};
const counts = new Map<string, Tally>();
const countsFor = (name: string) => {
    let entry = counts.get(name);
    if (entry == null) {
        entry = {inputs: 0, refused: 0, accepted: 0, crashes: 0, byCategory: {}};
        counts.set(name, entry);
    }
    return entry;
};

afterAll(() => {
    const rows = [...counts].map(([name, tally]) => `${name}: ${tally.inputs} payloads, ${tally.refused} refused, ${tally.accepted} accepted, ${tally.crashes} throws`);
    const total = [...counts.values()].reduce((sum, tally) => sum + tally.inputs, 0);
    console.info(`[event fuzz] seed ${seed} (replay with CLEANROOM_TEST_SEED=${seed})\n  ${rows.join("\n  ")}\n  total: ${total} payloads`);
});

describe("events under fuzz: every event payload schema of the contract", () => {
    for (const [index, [event, schema]] of (Object.entries(coreEvents) as Array<[string, z.ZodType]>).entries()) {
        it(`${event}: ${runsPerEvent} generated payloads, each bad one refused by the schema, none throwing`, () => {
            const shape = objectShape(schema) ?? {};
            const fields = Object.keys(shape);
            const required = fields.filter((field) => !isOptional(shape[field]!));
            const valid = validArbitrary(schema) as fc.Arbitrary<Record<string, unknown>>;
            const tally = countsFor(event);
            const check = (payload: unknown, category: string, mustRefuse: boolean) => {
                tally.inputs++;
                tally.byCategory[category] = (tally.byCategory[category] ?? 0) + 1;
                let accepted: boolean;
                try {
                    accepted = schema.safeParse(payload).success;
                } catch (error) {
                    tally.crashes++;
                    throw new Error(`${event} (${category}): the schema threw ${String(error)}`);
                }
                if (mustRefuse && accepted)
                    throw new Error(`${event} (${category}): a payload that must be refused was accepted`);
                if (accepted)
                    tally.accepted++;
                else
                    tally.refused++;
                return true;
            };
            const nonObject = (value: unknown) => !isObjectLike(value);
            const missingRequired = (value: unknown) => isObjectLike(value) && required.some((field) => value[field] === undefined);
            const runs = (numRuns: number, part: number) => ({numRuns, seed: (seed + 7919 * (index + 1) + part) | 0, endOnFailure: true});

            // The schema parses each once, in `check` (validArbitrary kept only what it accepts): every one must be accepted.
            fc.assert(fc.property(valid, (payload) => check(payload, "valid", false)), runs(1000, 0));
            expect(tally.accepted, "every valid payload accepted").toBe(1000);
            fc.assert(fc.property(fc.anything({maxDepth: 4, withBigInt: true, withMap: true, withNullPrototype: true, withTypedArray: true}),
                (payload) => check(payload, "anything", nonObject(payload) || missingRequired(payload))), runs(2500, 1));
            fc.assert(fc.property(fc.jsonValue({maxDepth: 4}), (payload) => check(payload, "json", nonObject(payload) || missingRequired(payload))), runs(1500, 2));
            if (fields.length > 0) {
                fc.assert(fc.property(valid, fc.constantFrom(...required.length > 0 ? required : fields), (base, field) => {
                    const copy = {...base};
                    delete copy[field];
                    return check(copy, "one field removed", required.includes(field));
                }), runs(1000, 3));
                const wrong = fields.flatMap((field) => {
                    const arbitrary = clearlyWrongFor(shape[field]!);
                    return arbitrary == null ? [] : [arbitrary.map((value) => [field, value] as const)];
                });
                fc.assert(fc.property(valid, fc.oneof(...wrong), (base, [field, value]) =>
                    check({...base, [field]: value}, "one field of a type it never takes", true)), runs(2000, 4));
                fc.assert(fc.property(valid, fc.constantFrom(...fields), wrongValue, (base, field, value) =>
                    check({...base, [field]: value}, "one field changed", false)), runs(1000, 5));
            } else {
                fc.assert(fc.property(wrongValue, (payload) => check(payload, "wrong", nonObject(payload))), runs(4000, 3));
            }
            fc.assert(fc.property(valid, fc.constantFrom(...prototypeKeys), (base, key) => {
                const before = Object.getOwnPropertyNames(Object.prototype).length;
                check(JSON.parse(withJsonKey(base, key, {polluted: true})), "prototype keys", false);
                return Object.getOwnPropertyNames(Object.prototype).length === before && ({} as Record<string, unknown>).polluted === undefined;
            }), runs(500, 6));
            fc.assert(fc.property(fc.integer({min: 100, max: 20_000}), fc.boolean(), (depth, inField) =>
                check(inField && fields.length > 0 ? {[fields[0]!]: nestedArrays(depth)} : nestedArrays(depth),
                    "deeply nested", !inField || fields.length === 0 || required.length > 1)), runs(500, 7));

            expect(tally.inputs).toBeGreaterThanOrEqual(runsPerEvent);
            expect(tally.crashes).toBe(0);
        });
    }

    it("the client drops event payloads that the contract refuses, and delivers those it accepts", async () => {
        // A core side that emits a payload the contract refuses.
        const events = new CoreEventEmitter();
        const fake = {call: async () => ({ok: true, value: null}), events} as unknown as CoreService;
        const [coreSide, clientSide, close] = createInProcessChannelPair();
        serveCoreOverChannel(fake, coreSide);
        const listener = connectCoreClient(clientSide);
        const seen: unknown[] = [];
        listener.subscribe("turn.finished", (payload) => seen.push(["turn.finished", payload]));
        listener.subscribe("message.text", (payload) => seen.push(["message.text", payload]));
        const bogus = {conversationId: "../../x y", route: "elsewhere", tokens: "lots"};
        expect(coreEvents["turn.finished"].safeParse(bogus).success).toBe(false);
        events.emit("turn.finished", bogus as never);
        // Events arrive in order: once the valid one sent after it is delivered, the bogus one had its chance.
        const valid = {conversationId: "conv-1", messageId: 7, text: "a piece"};
        events.emit("message.text", valid);
        await expect.poll(() => seen.length).toBeGreaterThan(0);
        close();
        expect(seen).toEqual([["message.text", valid]]);
    });
});
