import fc from "fast-check";
import {describe, expect, it} from "vitest";
import type * as z from "zod";
import {coreCalls, maxMessageTextLength} from "../../src/core/common/api/index.js";
import {largestJsonBytes} from "../../src/core/common/rpc/largestJsonBytes.js";
import {maxRpcMessageBytes} from "../../src/core/common/rpc/maxRpcMessageBytes.js";
import {validArbitrary} from "../security/helpers/contractArbitraries.js";

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
const envelope = (method: string, input: unknown) => ({m: "call", a: [method, input], i: "V1StGXR8_Z5jdHi6B-myT", t: "q"});

/**
 * The transport's size limit (web mode's WebSocket maxPayload) comes from the contract: the
 * largest input any call accepts, every string character JSON-escaped. No valid call may be
 * larger, and every field of every call must be bounded for that number to exist.
 */
describe("the largest valid RPC message, computed from the contract", () => {
    it("every call's input is bounded (each string and array has a maximum, each object is strict)", () => {
        for (const [method, call] of Object.entries(coreCalls))
            expect(largestJsonBytes(call.input as z.ZodType), method).toBeLessThan(Infinity);
        expect(maxRpcMessageBytes).toBeLessThan(16 * 1024 * 1024);
    });

    it("chat.send at its text limit, every character escaped (\\u0000: six bytes), fits", () => {
        const input = {conversationId: "c".repeat(128), text: "\u0000".repeat(maxMessageTextLength), maxTokens: 32_768, route: "cloud"};
        expect(coreCalls["chat.send"].input.safeParse(input).success).toBe(true);
        expect(coreCalls["chat.send"].input.safeParse({...input, text: input.text + "x"}).success).toBe(false);
        expect(jsonBytes(input)).toBeLessThanOrEqual(largestJsonBytes(coreCalls["chat.send"].input));
        expect(jsonBytes(envelope("chat.send", input))).toBeLessThanOrEqual(maxRpcMessageBytes);
    });

    it("models.detect with 100 paths of 4,096 escaped characters (the contract's largest input) fits", () => {
        const input = {add: false, paths: Array.from({length: 100}, () => "\u0001".repeat(4096))};
        expect(coreCalls["models.detect"].input.safeParse(input).success).toBe(true);
        expect(jsonBytes(envelope("models.detect", input))).toBeLessThanOrEqual(maxRpcMessageBytes);
        expect(jsonBytes(envelope("models.detect", input))).toBeGreaterThan(2 * 1024 * 1024);
    });

    it("no valid input of any call, generated from the contract, is larger than its bound", () => {
        for (const [method, call] of Object.entries(coreCalls)) {
            const bound = largestJsonBytes(call.input as z.ZodType);
            fc.assert(fc.property(validArbitrary(call.input as z.ZodType), (input) => jsonBytes(input) <= bound), {numRuns: 300, seed: 16});
            expect(bound, method).toBeGreaterThan(0);
        }
    });
});
