import type {WebPreferences} from "electron";
import {contentSecurityPolicy as buildContentSecurityPolicy} from "../core/common/contentSecurityPolicy.js";

/** The custom scheme the renderer is served from; nothing else may load in the window. */
export const appScheme = "app";
export const appHost = "cleanroom";
export const appOrigin = `${appScheme}://${appHost}`;

/** The renderer needs no network: scripts and styles from the app only, no connections out (the core is reached over a MessagePort). */
export const contentSecurityPolicy = buildContentSecurityPolicy({connectSrc: ["'self'"]});

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
