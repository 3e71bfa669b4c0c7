import {BrowserWindow, session} from "electron";
import {openExternalSafely} from "./openExternalSafely.js";
import {appOrigin, contentSecurityPolicy, isAppUrl, secureWebPreferences} from "./securityPolicy.js";

/**
 * The one window: secure web preferences, a strict CSP header on every response, every
 * permission request denied, navigation away and new windows refused (https links go to the
 * user's browser after validation).
 */
export function createSecureWindow(preloadPath: string): BrowserWindow {
    const window = new BrowserWindow({
        width: 1280,
        height: 820,
        minWidth: 800,
        minHeight: 560,
        show: false,
        title: "Cleanroom",
        webPreferences: secureWebPreferences(preloadPath)
    });
    const {webContents} = window;
    const windowSession = webContents.session;

    windowSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    windowSession.setPermissionCheckHandler(() => false);
    windowSession.setDevicePermissionHandler(() => false);
    windowSession.webRequest.onHeadersReceived((details, callback) => {
        callback({responseHeaders: {...details.responseHeaders, "Content-Security-Policy": [contentSecurityPolicy]}});
    });

    webContents.on("will-navigate", (event, url) => {
        event.preventDefault();
        if (!isAppUrl(url))
            void openExternalSafely(url);
    });
    webContents.on("will-redirect", (event) => event.preventDefault());
    webContents.on("will-attach-webview", (event) => event.preventDefault());
    webContents.setWindowOpenHandler(({url}) => {
        void openExternalSafely(url);
        return {action: "deny"};
    });

    window.once("ready-to-show", () => window.show());
    void window.loadURL(`${appOrigin}/index.html`);
    return window;
}

/** Denies permissions for every session the app might create, not only the window's. */
export function denyAllPermissionsByDefault() {
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
}
