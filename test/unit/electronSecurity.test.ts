import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {repoRoot} from "../helpers/testModel.js";

/** The shell's source, read as text: these checks hold whether or not Electron can run here. */
const mainDir = path.join(repoRoot, "src/main");
const source = Object.fromEntries(fs.readdirSync(mainDir).filter((name) => name.endsWith(".ts"))
    .map((name) => [name, fs.readFileSync(path.join(mainDir, name), "utf8")]));
const allMain = Object.values(source).join("\n");
const preload = fs.readFileSync(path.join(repoRoot, "src/preload/index.ts"), "utf8");

function code(text: string) {
    // Comments may mention anything; only code counts.
    return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

describe("Electron main keeps its secure defaults", () => {
    it("creates windows isolated, sandboxed and without Node", () => {
        const prefs = code(source["securityPolicy.ts"]!);
        expect(prefs).toMatch(/contextIsolation:\s*true/);
        expect(prefs).toMatch(/sandbox:\s*true/);
        expect(prefs).toMatch(/nodeIntegration:\s*false/);
        expect(prefs).toMatch(/webSecurity:\s*true/);
        expect(prefs).toMatch(/webviewTag:\s*false/);
        expect(prefs).toMatch(/allowRunningInsecureContent:\s*false/);
        expect(code(source["createSecureWindow.ts"]!)).toMatch(/webPreferences:\s*secureWebPreferences\(/);
        expect(code(allMain)).not.toMatch(/nodeIntegration:\s*true|contextIsolation:\s*false|sandbox:\s*false|webSecurity:\s*false/);
    });

    it("sends a strict CSP header without unsafe sources", async () => {
        const {contentSecurityPolicy: policy} = await import("../../src/main/securityPolicy.js");
        expect(policy).toContain("default-src 'none'");
        expect(policy).toContain("script-src 'self'");
        expect(policy).toContain("connect-src 'self';");
        expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/);
        expect(code(source["createSecureWindow.ts"]!)).toMatch(/onHeadersReceived[\s\S]*Content-Security-Policy/);
        expect(code(source["appProtocol.ts"]!)).toContain("\"Content-Security-Policy\": contentSecurityPolicy");
    });

    it("refuses navigation and new windows", () => {
        const window = code(source["createSecureWindow.ts"]!);
        expect(window).toMatch(/"will-navigate",\s*\(event[^)]*\)\s*=>\s*\{\s*event\.preventDefault\(\)/);
        expect(window).toMatch(/setWindowOpenHandler\([\s\S]*?action:\s*"deny"/);
        expect(window).toMatch(/"will-redirect"[\s\S]*?preventDefault/);
        expect(code(source["index.ts"]!)).toMatch(/web-contents-created[\s\S]*setWindowOpenHandler\(\(\)\s*=>\s*\(\{action:\s*"deny"\}\)\)/);
    });

    it("denies every permission request", () => {
        const window = code(source["createSecureWindow.ts"]!);
        expect(window).toMatch(/setPermissionRequestHandler\(\([^)]*\)\s*=>\s*callback\(false\)\)/);
        expect(window).toMatch(/setPermissionCheckHandler\(\(\)\s*=>\s*false\)/);
        expect(window).toMatch(/session\.defaultSession\.setPermissionRequestHandler/);
    });

    it("validates the IPC sender before handing out a port to the core", () => {
        const connect = code(source["connectRendererToCore.ts"]!);
        expect(connect).toMatch(/event\.sender === window\.webContents/);
        expect(connect).toMatch(/frame === event\.sender\.mainFrame/);
        expect(connect).toMatch(/isAppUrl\(frame\.url\)/);
        expect(connect).toMatch(/if \(!isTrustedSender\(event, window\)\)\s*return;/);
    });

    it("opens external links only as validated https URLs through shell.openExternal", () => {
        const external = code(source["openExternalSafely.ts"]!);
        expect(external).toMatch(/parsed\.protocol === "https:"/);
        expect(external).toMatch(/if \(!isSafeExternalUrl\(url\)\)\s*return false;\s*await shell\.openExternal/);
        expect(code(allMain).match(/shell\.openExternal/g)).toHaveLength(1);
    });

    it("holds a single-instance lock", () => {
        expect(code(source["index.ts"]!)).toMatch(/if \(!app\.requestSingleInstanceLock\(\)\)\s*\{\s*app\.quit\(\)/);
    });

    it("runs the core in a utility process, restarted when it dies, never in main", () => {
        const coreProcess = code(source["CoreProcess.ts"]!);
        expect(coreProcess).toMatch(/utilityProcess\.fork\(entryPath/);
        expect(coreProcess).toMatch(/once\("exit"[\s\S]*this\.start\(\)/);
        expect(code(source["index.ts"]!)).toContain("\"utilityEntry.mjs\"");
        expect(code(allMain)).not.toMatch(/from "\.\.\/core\/node/);
    });

    it("starts the core's utility process with the core's environment (a one-thread libuv pool, see coreProcessEnv), the passphrase for the first only", () => {
        const coreProcess = code(source["CoreProcess.ts"]!);
        expect(coreProcess).toMatch(/const env: NodeJS\.ProcessEnv = \{\.\.\.coreProcessEnv, \.\.\.process\.env\}[\s\S]*?utilityProcess\.fork\(entryPath, \[[\s\S]*?\], \{[^}]*\benv\b[^}]*\}\)/);
        // A core process started after a lock (or a crash) starts locked: the environment's passphrase is for the first one only.
        expect(coreProcess).toMatch(/if \(this\._started\)\s*delete env\.CLEANROOM_PASSPHRASE/);
    });

    it("keeps the cloud key with safeStorage and warns on basic_text", () => {
        const vault = code(source["KeyVault.ts"]!);
        expect(vault).toMatch(/safeStorage\.encryptString/);
        expect(vault).toMatch(/safeStorage\.getSelectedStorageBackend\(\)/);
        expect(vault).toMatch(/"basic_text"[\s\S]*warning|warning[\s\S]*"basic_text"/);
        expect(vault).toMatch(/writeFileDurably\(this\._file/); // 0600, exclusive random temporary file, rename (test/security/privateWrites.test.ts)
    });
});

describe("the preload exposes one curated object", () => {
    it("calls exposeInMainWorld exactly once, with call and subscribe limited to the contract", () => {
        const text = code(preload);
        expect(text.match(/exposeInMainWorld\(/g)).toHaveLength(1);
        expect(text).toMatch(/if \(!isApiMethod\(method\)\)/);
        expect(text).toMatch(/if \(!isApiEvent\(event\)/);
        expect(text).not.toMatch(/exposeInMainWorld\([^)]*ipcRenderer/);
    });
});
