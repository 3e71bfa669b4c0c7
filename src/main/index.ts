import path from "node:path";
import {app, type BrowserWindow} from "electron";
import {registerAppScheme, serveRenderer} from "./appProtocol.js";
import {connectRendererToCore} from "./connectRendererToCore.js";
import {CoreProcess} from "./CoreProcess.js";
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
            vault
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
