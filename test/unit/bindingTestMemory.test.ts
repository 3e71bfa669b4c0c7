import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {bindingFingerprint, rememberedBindingTest, type TestedBinary} from "../../src/core/node/engine/bindingTestMemory.js";

const folders: string[] = [];
afterEach(() => folders.splice(0).forEach((dir) => fs.rmSync(dir, {recursive: true, force: true})));

/** A binary's folder as node-llama-cpp ships it (the binding and the libraries beside it), and the record's file. */
function fixture() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "binding-test-memory-"));
    folders.push(dir);
    const bins = path.join(dir, "bins");
    fs.mkdirSync(bins);
    fs.writeFileSync(path.join(bins, "llama-addon.node"), "binding");
    fs.writeFileSync(path.join(bins, "libggml-base.so"), "library");
    const binary: TestedBinary = {bindingPath: path.join(bins, "llama-addon.node"), extBackendsPath: undefined, gpu: false};
    return {bins, binary, file: path.join(dir, "data", "binary-tests.json")};
}

/** node-llama-cpp's test in a child, counted: resolves with `passes`. */
function childTest(passes = true) {
    const test = Object.assign(async () => {
        test.runs++;
        return passes;
    }, {runs: 0});
    return test;
}

describe("node-llama-cpp's binary test, remembered once passed (bindingTestMemory)", () => {
    it("runs the test in a child the first time only: the next loads of the same binary on this machine skip it", async () => {
        const {binary, file} = fixture();
        const test = childTest();
        expect(await rememberedBindingTest(binary, test, file)).toBe(true);
        expect(await rememberedBindingTest(binary, test, file)).toBe(true);
        expect(await rememberedBindingTest(binary, test, file)).toBe(true);
        expect(test.runs).toBe(1);
        expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({version: 1, passed: [bindingFingerprint(binary)]});
    });

    it("never remembers a failed test: an incompatible binary is tested (and refused) every time", async () => {
        const {binary, file} = fixture();
        const test = childTest(false);
        expect(await rememberedBindingTest(binary, test, file)).toBe(false);
        expect(await rememberedBindingTest(binary, test, file)).toBe(false);
        expect(test.runs).toBe(2);
        expect(fs.existsSync(file)).toBe(false);
    });

    it("tests again when a file of the binary's folder changes, or for another GPU type of the same binding", async () => {
        const {bins, binary, file} = fixture();
        const test = childTest();
        await rememberedBindingTest(binary, test, file);
        fs.writeFileSync(path.join(bins, "libggml-base.so"), "another build of the library");
        await rememberedBindingTest(binary, test, file);
        expect(test.runs).toBe(2);
        await rememberedBindingTest({...binary, gpu: "vulkan"}, test, file);
        expect(test.runs).toBe(3);
        // Both kept: the CPU and the Vulkan binary are each tested once.
        await rememberedBindingTest(binary, test, file);
        await rememberedBindingTest({...binary, gpu: "vulkan"}, test, file);
        expect(test.runs).toBe(3);
    });

    it("tests again, and writes a good record, when the record is damaged", async () => {
        const {binary, file} = fixture();
        fs.mkdirSync(path.dirname(file), {recursive: true});
        for (const damaged of ["{not json", JSON.stringify({version: 1, passed: "all"}), JSON.stringify({version: 2, passed: [bindingFingerprint(binary)]})]) {
            fs.writeFileSync(file, damaged);
            const test = childTest();
            expect(await rememberedBindingTest(binary, test, file)).toBe(true);
            expect(test.runs, damaged).toBe(1);
            expect(JSON.parse(fs.readFileSync(file, "utf8")).passed).toEqual([bindingFingerprint(binary)]);
        }
    });

    it("a data folder it cannot write to only means testing every time", async () => {
        const {binary} = fixture();
        const blocked = path.join(folders[0]!, "a-file");
        fs.writeFileSync(blocked, "");
        const test = childTest();
        expect(await rememberedBindingTest(binary, test, path.join(blocked, "binary-tests.json"))).toBe(true);
        expect(await rememberedBindingTest(binary, test, path.join(blocked, "binary-tests.json"))).toBe(true);
        expect(test.runs).toBe(2);
    });
});
