import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {
    defaultExplanationsFile, defaultInputs, formatReport, readExplanations, reportPasses, runElectronegativity
} from "../../scripts/electronegativity.js";
import {tempDir} from "../helpers/tempCore.js";
import {repoRoot} from "../helpers/testModel.js";

/**
 * Claim: Electronegativity, run offline over the Electron shell (src/main, src/preload) and the
 * renderer's build config (index.html with its CSP, vite.config.ts, package.json), reports
 * nothing that security/electronegativity-explained.json does not explain, and every
 * explanation still matches a finding. A control scans a deliberately insecure shell and
 * must fail.
 */
describe("Electronegativity over the app's sources", () => {
    it("every finding is explained, no explanation is stale, every file parsed, nothing fetched from the network", async () => {
        const report = await runElectronegativity();
        console.info(`[electronegativity] ${formatReport(report)}`);
        expect(report.unexplained, formatReport(report)).toEqual([]);
        expect(report.stale, formatReport(report)).toEqual([]);
        expect(report.parseErrors).toEqual([]);
        expect(reportPasses(report)).toBe(true);
        // The scan really ran: its checks loaded, and it read the shell (it always notes the version and the window).
        expect(report.checks.atomic).toBeGreaterThanOrEqual(30);
        expect(report.checks.global).toBeGreaterThanOrEqual(4);
        expect(report.findings.some((finding) => finding.file.startsWith("src/main/"))).toBe(true);
        // The scanner asked for its translations; the stub answered, nothing left the machine.
        expect(report.blockedRequests.length).toBeGreaterThanOrEqual(1);
        expect(report.blockedRequests.every((url) => url.startsWith("https://"))).toBe(true);
    }, 60_000);

    it("the explanations name real files and give a reason a reviewer can check", () => {
        const explanations = readExplanations(defaultExplanationsFile);
        expect(explanations.length).toBeGreaterThan(0);
        for (const entry of explanations) {
            expect(entry.check).toMatch(/^[A-Z_]+_CHECK$/);
            if (entry.file !== "N/A") {
                expect(fs.existsSync(path.join(repoRoot, entry.file)), entry.file).toBe(true);
                expect(defaultInputs.some((input) => entry.file === input || entry.file.startsWith(input + "/")), entry.file).toBe(true);
            }
            expect(entry.why.length, `${entry.check} ${entry.file}`).toBeGreaterThanOrEqual(80);
        }
    });

    // (Without `sandbox: false` on purpose: Electronegativity 1.10.3 then stops reporting nodeIntegration, an inverted condition in its check.)
    it("control: an insecure shell (Node in the renderer, no isolation, no sandbox, no CSP, open navigation) fails the scan", async () => {
        const root = tempDir("electronegativity-control");
        fs.mkdirSync(path.join(root, "src/main"), {recursive: true});
        fs.writeFileSync(path.join(root, "src/main/index.ts"), [
            "import {app, BrowserWindow, shell} from \"electron\";",
            "app.whenReady().then(() => {",
            "    const window = new BrowserWindow({webPreferences: {nodeIntegration: true, contextIsolation: false, webSecurity: false}});",
            "    window.webContents.on(\"new-window\", (_event: unknown, url: string) => shell.openExternal(url));",
            "    void window.loadURL(\"http://example.com/\");",
            "});",
            ""
        ].join("\n"));
        fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({name: "control", devDependencies: {electron: "41.7.1"}}));

        const report = await runElectronegativity({root, inputs: ["src/main", "package.json"]});
        const checks = new Set(report.unexplained.map((finding) => finding.check));
        for (const check of [
            "NODE_INTEGRATION_JS_CHECK", "CONTEXT_ISOLATION_JS_CHECK", "SANDBOX_JS_CHECK", "WEB_SECURITY_JS_CHECK", "CSP_GLOBAL_CHECK",
            "LIMIT_NAVIGATION_GLOBAL_CHECK", "PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK", "OPEN_EXTERNAL_JS_CHECK"
        ])
            expect(checks, check).toContain(check);
        expect(reportPasses(report)).toBe(false);
        // Our explanations do not carry over to another file: the same check elsewhere is unexplained.
        expect(report.unexplained.some((finding) => finding.check === "CONTEXT_ISOLATION_JS_CHECK" && finding.file === "src/main/index.ts")).toBe(true);
        // And an explanation for a finding that is gone is reported as stale.
        const stale = await runElectronegativity({root, inputs: ["src/main", "package.json"], explanations: [
            {check: "OPEN_EXTERNAL_JS_CHECK", file: "src/main/gone.ts", why: "x"}
        ]});
        expect(stale.stale).toHaveLength(1);
        fs.rmSync(root, {recursive: true, force: true});
    }, 60_000);
});
