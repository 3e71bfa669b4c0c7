"use strict";
/**
 * electron-builder afterPack hook (electron-builder.yml: `afterPack: build/afterPack.cjs`):
 * flips the packaged Electron binary's fuses before it is signed, so the shipped app cannot
 * be turned into a plain Node runtime or a debugger target, and loads only its own,
 * integrity-checked app.asar.
 *
 * electron-builder's own `electronFuses` setting (kept in electron-builder.yml with the same
 * values, checked by test/unit/electronBuilderConfig.test.ts) flips them again right after this
 * hook. Doing it here as well means the fuses are set by code that is tested against a binary
 * (test/unit/afterPackFuses.test.ts), read back after flipping, and that the build fails
 * loudly if the binary has no fuse wire or a fuse did not take.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- electron-builder loads hooks with require(). */
const path = require("node:path");
const {flipFuses, getCurrentFuseWire, FuseVersion, FuseV1Options} = require("@electron/fuses");

/** The fuses and their values. Keys are FuseV1Options names. */
const fuseSettings = Object.freeze({
    /** No ELECTRON_RUN_AS_NODE: the app binary cannot be used as a Node interpreter. */
    RunAsNode: false,
    /** Cookies on disk are encrypted with the OS keychain's key. */
    EnableCookieEncryption: true,
    /** NODE_OPTIONS (e.g. --require of an attacker's file) is ignored. */
    EnableNodeOptionsEnvironmentVariable: false,
    /** --inspect, --inspect-brk and friends are ignored: no debugger can attach through the command line. */
    EnableNodeCliInspectArguments: false,
    /** app.asar is checked against the hash embedded at build time (macOS and Windows). */
    EnableEmbeddedAsarIntegrityValidation: true,
    /** The app is loaded only from app.asar, never from a loose app/ folder next to it. */
    OnlyLoadAppFromAsar: true
});

/** The @electron/fuses config for `fuseSettings`. */
function fuseConfig({resetAdHocDarwinSignature = false} = {}) {
    const config = {version: FuseVersion.V1, resetAdHocDarwinSignature};
    for (const [name, value] of Object.entries(fuseSettings)) {
        const index = FuseV1Options[name];
        if (typeof index !== "number")
            throw new Error(`afterPack: unknown fuse ${name}`);
        config[index] = value;
    }
    return config;
}

/** Where electron-builder put the Electron binary (the .app bundle on macOS, as @electron/fuses expects). */
function electronBinaryPath(context) {
    const {appOutDir, electronPlatformName, packager} = context;
    if (electronPlatformName === "darwin" || electronPlatformName === "mas")
        return path.join(appOutDir, `${packager.appInfo.productFilename}.app`);
    if (electronPlatformName === "win32")
        return path.join(appOutDir, `${packager.appInfo.productFilename}.exe`);
    return path.join(appOutDir, packager.executableName);
}

/** electron-builder's `Arch` enum: arm64 is 3, universal is 4. Flipping fuses breaks an ad-hoc signature there. */
const armLikeArchs = new Set([3, 4]);

async function afterPack(context) {
    const binary = electronBinaryPath(context);
    const darwin = context.electronPlatformName === "darwin" || context.electronPlatformName === "mas";
    await flipFuses(binary, fuseConfig({resetAdHocDarwinSignature: darwin && armLikeArchs.has(context.arch)}));

    // Read back: every fuse must now hold the value asked for ("1" enable, "0" disable).
    const wire = await getCurrentFuseWire(binary);
    for (const [name, value] of Object.entries(fuseSettings)) {
        const state = wire[FuseV1Options[name]];
        if (state !== (value ? 49 : 48))
            throw new Error(`afterPack: fuse ${name} is ${String(state)} after flipping, expected ${value ? "enabled" : "disabled"}`);
    }
}

module.exports = afterPack;
module.exports.afterPack = afterPack;
module.exports.default = afterPack;
module.exports.fuseSettings = fuseSettings;
module.exports.fuseConfig = fuseConfig;
module.exports.electronBinaryPath = electronBinaryPath;
