import path from "node:path";
import {app, type BrowserWindow} from "electron";
import {registerAppScheme, serveRenderer} from "./appProtocol.js";
import {connectRendererToCore} from "./connectRendererToCore.js";
import {CoreProcess} from "./CoreProcess.js";
import {GpuSettingSchema} from "../core/common/api/schemas.js";
import type {GpuSetting} from "../core/common/api/types.js";
import {createSecureWindow, denyAllPermissionsByDefault} from "./createSecureWindow.js";
import {KeyVault} from "./KeyVault.js";

/**
 * Electron main: thin. Secure window, app lifecycle, the keychain, and the core started in a
 * utility process and connected to the renderer over a MessagePort. Built to out/main/index.cjs.
 */
const buildDir = path.resolve(__dirname, "..");
const paths = {
    preload: path.join(buildDir, "preload", "index.cjs"),
    coreEntry: path.join(buildDir, "core", "utilityEntry.mjs"),
    renderer: path.resolve(buildDir, "..", "dist", "renderer")
};

if (!app.requestSingleInstanceLock()) {
    app.quit();
} else {
    registerAppScheme();
    let window: BrowserWindow | null = null;
    let core: CoreProcess | null = null;

    app.on("second-instance", () => {
        if (window != null) {
            if (window.isMinimized())
                window.restore();
            window.focus();
        }
    });
    app.on("web-contents-created", (_event, contents) => {
        contents.setWindowOpenHandler(() => ({action: "deny"}));
        contents.on("will-attach-webview", (event) => event.preventDefault());
    });

    void app.whenReady().then(() => {
        denyAllPermissionsByDefault();
        serveRenderer(paths.renderer);
        const vault = new KeyVault(app.getPath("userData"));
        if (vault.warning != null)
            process.stderr.write(`cleanroom: ${vault.warning}\n`);
        core = new CoreProcess({
            entryPath: paths.coreEntry,
            databasePath: path.join(app.getPath("userData"), "cleanroom.db"),
            vault,
            gpu: gpuFlag(process.argv)
        });
        core.start();
        window = createSecureWindow(paths.preload);
        connectRendererToCore(window, core);
    });

    let quitting = false;
    app.on("before-quit", (event) => {
        if (quitting || core == null)
            return;
        // Let the core end every session (each KV scrubbed) before the app goes.
        event.preventDefault();
        quitting = true;
        void core.stop().finally(() => app.quit());
    });
    app.on("window-all-closed", () => app.quit());
}

/** `--gpu <setting>` (or `--gpu=<setting>`) on the app's command line; a value that is not a setting is ignored, with a line saying so. */
function gpuFlag(argv: string[]): GpuSetting | undefined {
    const index = argv.findIndex((arg) => arg === "--gpu" || arg.startsWith("--gpu="));
    if (index < 0)
        return undefined;
    const given = argv[index]!.startsWith("--gpu=") ? argv[index]!.slice("--gpu=".length) : argv[index + 1];
    const parsed = GpuSettingSchema.safeParse(given);
    if (!parsed.success) {
        process.stderr.write(`cleanroom: --gpu must be one of ${GpuSettingSchema.options.join(", ")}; "${given ?? ""}" is ignored.\n`);
        return undefined;
    }
    return parsed.data;
}
