import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {tempDir} from "../helpers/tempCore.js";
import {repoRoot} from "../helpers/testModel.js";

/**
 * Claim: the packaged app's Electron fuses are set by the afterPack hook: no run-as-node, no
 * NODE_OPTIONS, no --inspect arguments, embedded asar integrity on, app loaded only from asar,
 * cookie encryption on. No Electron binary is available here, so the hook runs on fake
 * binaries: files holding @electron/fuses' sentinel followed by a fuse wire, as Electron's do.
 */
const require = createRequire(import.meta.url);
type Context = {appOutDir: string, electronPlatformName: string, arch: number, packager: {executableName: string, appInfo: {productFilename: string}}};
type Hook = ((context: Context) => Promise<void>) & {
    fuseSettings: Record<string, boolean>,
    fuseConfig: (options?: {resetAdHocDarwinSignature?: boolean}) => Record<string, unknown>,
    electronBinaryPath: (context: Context) => string
};
const hook = require(path.join(repoRoot, "build/afterPack.cjs")) as Hook;
const {FuseV1Options, FuseVersion} = require("@electron/fuses") as {FuseV1Options: Record<string, number>, FuseVersion: {V1: string}};
const yaml = require("js-yaml") as {load(text: string): unknown};
const {resolveFunction} = require("app-builder-lib/out/util/resolve") as {
    resolveFunction(type: string | undefined, executor: string, name: string, root: string): Promise<unknown>
};

/** @electron/fuses finds the wire right after this string (src/constants.ts). */
const sentinel = "dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX";
const enable = 0x31;
const disable = 0x30;
const expected = {
    RunAsNode: false,
    EnableCookieEncryption: true,
    EnableNodeOptionsEnvironmentVariable: false,
    EnableNodeCliInspectArguments: false,
    EnableEmbeddedAsarIntegrityValidation: true,
    OnlyLoadAppFromAsar: true
};

/** Some bytes, then the sentinel, the wire version, its length and the fuses (all enabled, as Electron ships them), then more bytes. */
function fakeElectron(file: string, {fuses = 8, version = 1, copies = 1, withSentinel = true} = {}) {
    const filler = (size: number, seed: number) => Buffer.from(Array.from({length: size}, (_, index) => (index * 31 + seed) % 251));
    const parts: Buffer[] = [filler(4096, 7)];
    for (let copy = 0; copy < copies; copy++) {
        if (withSentinel)
            parts.push(Buffer.from(sentinel, "ascii"), Buffer.from([version, fuses]), Buffer.alloc(fuses, enable));
        parts.push(filler(2048, 11 + copy));
    }
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, Buffer.concat(parts));
    return file;
}

function wiresOf(file: string) {
    const bytes = fs.readFileSync(file);
    const wires: number[][] = [];
    for (let at = bytes.indexOf(sentinel); at >= 0; at = bytes.indexOf(sentinel, at + 1)) {
        const start = at + sentinel.length;
        wires.push([...bytes.subarray(start + 2, start + 2 + bytes[start + 1]!)]);
    }
    return wires;
}

function context(appOutDir: string, electronPlatformName: string, arch = 1): Context {
    return {appOutDir, electronPlatformName, arch, packager: {executableName: "cleanroom", appInfo: {productFilename: "Cleanroom"}}};
}

/** The bytes outside the fuse wires, to check nothing else was touched. */
function outsideWires(file: string) {
    const bytes = Buffer.from(fs.readFileSync(file));
    for (let at = bytes.indexOf(sentinel); at >= 0; at = bytes.indexOf(sentinel, at + 1))
        bytes.fill(0, at + sentinel.length + 2, at + sentinel.length + 2 + bytes[at + sentinel.length + 1]!);
    return bytes;
}

describe("afterPack hook: Electron fuses", () => {
    it("asks for exactly the six fuses, with the right values, as a FuseVersion.V1 config", () => {
        expect(hook.fuseSettings).toEqual(expected);
        const config = hook.fuseConfig();
        expect(config.version).toBe(FuseVersion.V1);
        for (const [name, value] of Object.entries(expected))
            expect(config[FuseV1Options[name]!], name).toBe(value);
        expect(hook.fuseConfig({resetAdHocDarwinSignature: true}).resetAdHocDarwinSignature).toBe(true);
    });

    it("electron-builder.yml runs it (afterPack), electron-builder can load it, and its own electronFuses agree", async () => {
        const config = yaml.load(fs.readFileSync(path.join(repoRoot, "electron-builder.yml"), "utf8")) as Record<string, unknown>;
        expect(config.afterPack).toBe("build/afterPack.cjs");
        // electron-builder resolves hooks against the working directory (it runs from the repository root).
        const loaded = await resolveFunction(undefined, config.afterPack as string, "afterPack", repoRoot);
        expect(loaded).toBe(hook);
        const camel = (name: string) => name[0]!.toLowerCase() + name.slice(1);
        const electronFuses = config.electronFuses as Record<string, boolean>;
        expect(electronFuses).toEqual(Object.fromEntries(Object.entries(expected).map(([name, value]) => [camel(name), value])));
    });

    it("runs on a fake Electron binary (Linux): the six fuses flipped, the other two and every other byte untouched", async () => {
        const out = tempDir("fuses-linux");
        const binary = fakeElectron(path.join(out, "cleanroom"));
        const before = outsideWires(binary);
        await hook(context(out, "linux"));

        const [wire] = wiresOf(binary);
        for (const [name, value] of Object.entries(expected))
            expect(wire![FuseV1Options[name]!], name).toBe(value ? enable : disable);
        expect(wire![FuseV1Options.LoadBrowserProcessSpecificV8Snapshot!]).toBe(enable);
        expect(wire![FuseV1Options.GrantFileProtocolExtraPrivileges!]).toBe(enable);
        expect(outsideWires(binary).equals(before)).toBe(true);
    });

    it("runs on a fake Electron binary (Windows .exe, macOS framework, universal with two wires) at the path electron-builder uses", async () => {
        const windows = tempDir("fuses-win");
        const exe = fakeElectron(path.join(windows, "Cleanroom.exe"));
        await hook(context(windows, "win32"));
        expect(wiresOf(exe)[0]!.slice(0, 6)).toEqual([disable, enable, disable, disable, enable, enable]);

        const mac = tempDir("fuses-mac");
        const framework = fakeElectron(path.join(mac, "Cleanroom.app/Contents/Frameworks/Electron Framework.framework/Electron Framework"), {copies: 2});
        expect(hook.electronBinaryPath(context(mac, "darwin"))).toBe(path.join(mac, "Cleanroom.app"));
        await hook(context(mac, "darwin", 1)); // x64: no ad-hoc re-signing (codesign exists only on macOS)
        const wires = wiresOf(framework);
        expect(wires).toHaveLength(2);
        for (const wire of wires)
            expect(wire.slice(0, 6)).toEqual([disable, enable, disable, disable, enable, enable]);
    });

    it("control: fails the build on a binary without a fuse wire, with another wire version, or with a wire too short for these fuses", async () => {
        const none = tempDir("fuses-none");
        fakeElectron(path.join(none, "cleanroom"), {withSentinel: false});
        await expect(hook(context(none, "linux"))).rejects.toThrow(/sentinel/);

        const version = tempDir("fuses-version");
        fakeElectron(path.join(version, "cleanroom"), {version: 2});
        await expect(hook(context(version, "linux"))).rejects.toThrow(/version/);

        const short = tempDir("fuses-short");
        fakeElectron(path.join(short, "cleanroom"), {fuses: 4});
        await expect(hook(context(short, "linux"))).rejects.toThrow(/not long enough/);
    });
});
