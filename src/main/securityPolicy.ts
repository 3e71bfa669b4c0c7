import type {WebPreferences} from "electron";

/** The custom scheme the renderer is served from; nothing else may load in the window. */
export const appScheme = "app";
export const appHost = "cleanroom";
export const appOrigin = `${appScheme}://${appHost}`;

/** The renderer needs no network: scripts and styles from the app only, no connections out. */
export const contentSecurityPolicy = [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
    "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'", "object-src 'none'"
].join("; ");

/** Secure defaults for the one window: isolated, sandboxed, no Node, no remote content features. */
export function secureWebPreferences(preloadPath: string): WebPreferences {
    return {
        preload: preloadPath,
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        experimentalFeatures: false,
        webviewTag: false,
        navigateOnDragDrop: false,
        spellcheck: false,
        safeDialogs: true
    };
}

/** Whether a URL belongs to the app's own pages. */
export function isAppUrl(url: string): boolean {
    try {
        const parsed = new URL(url);
        return parsed.protocol === `${appScheme}:` && parsed.host === appHost;
    } catch {
        return false;
    }
}
