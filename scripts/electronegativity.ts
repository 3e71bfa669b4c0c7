/**
 * Runs Electronegativity (Doyensec's Electron security scanner) over the desktop shell's
 * sources (src/main, src/preload) and the renderer's build config (renderer/index.html with its
 * CSP, vite.config.ts, package.json for the Electron version), offline, and fails on any finding
 * that security/electronegativity-explained.json does not explain, and on any explanation that
 * no longer matches a finding.
 *
 *   npx tsx scripts/electronegativity.ts [--json]      (npm run electronegativity)
 *
 * Offline: Electronegativity fetches fresh translations (i18n) and Electron's release list with
 * `got`; here `got` is replaced, before the scanner loads, by a stub that answers 404 without
 * touching the network, and the release-list check (AVAILABLE_SECURITY_FIXES_GLOBAL_CHECK, which
 * can only work online) is excluded. Every other check runs: the bundled English texts are used.
 */
import fs from "node:fs";
import {createRequire} from "node:module";
import os from "node:os";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const defaultInputs = ["src/main", "src/preload", "renderer/index.html", "vite.config.ts", "package.json"];
export const defaultExplanationsFile = path.join(repoRoot, "security/electronegativity-explained.json");
/** Needs Electron's release list from the network; the Electron version itself is still reported by ELECTRON_VERSION_JSON_CHECK. */
export const excludedChecks = ["AvailableSecurityFixesGlobalCheck"];

export type Finding = {
    check: string,
    /** Relative to the scanned root, `/`-separated; "N/A" for a global finding with no place. */
    file: string,
    line: number,
    column: number,
    severity: string,
    confidence: string,
    manualReview: boolean,
    description: string,
    sample: string | null
};

export type Explanation = {check: string, file: string, count?: number, why: string};

export type ElectronegativityReport = {
    inputs: string[],
    checks: {global: number, atomic: number},
    findings: Finding[],
    /** Findings no explanation covers (or more of them than the explanation's `count`). */
    unexplained: Finding[],
    /** Explanations that matched no finding: the code changed, so the entry must be reviewed or removed. */
    stale: Explanation[],
    /** Files the scanner could not parse (`tolerable: false`), which would hide findings. */
    parseErrors: Array<{file: string, message: string}>,
    /** Requests the scanner tried to make, answered by the offline stub. */
    blockedRequests: string[]
};

type RawIssue = {
    id: string, file: string, location: {line: number, column: number},
    severity: {name?: string, value: number}, confidence: {name?: string, value: number},
    manualReview?: boolean, description?: string, sample?: string
};
type RawResult = {globalChecks: number, atomicChecks: number, errors: Array<{file: string, message: string, tolerable: boolean}>, issues: RawIssue[]};
type Runner = (options: Record<string, unknown>) => Promise<RawResult>;

const blockedRequests: string[] = [];
let runner: Runner | null = null;

/** Loads the scanner once, with `got` replaced by the offline stub. */
function loadRunner(): Runner {
    if (runner != null)
        return runner;

    const require = createRequire(import.meta.url);
    const packageDir = path.dirname(require.resolve("@doyensec/electronegativity/package.json"));
    for (const user of ["dist/locales/i18n.js", "dist/finder/checks/GlobalChecks/AvailableSecurityFixesGlobalCheck.js"]) {
        const gotPath = createRequire(path.join(packageDir, user)).resolve("got");
        const offline = (url: unknown) => {
            blockedRequests.push(String(url));
            return Promise.resolve({statusCode: 404, body: "", headers: {}});
        };
        require.cache[gotPath] = {id: gotPath, filename: gotPath, loaded: true, exports: offline} as unknown as NodeJS.Module;
    }
    const loaded = require(path.join(packageDir, "dist/runner.js")) as Runner | {default: Runner};
    runner = typeof loaded === "function" ? loaded : loaded.default;
    return runner;
}

/** Copies the inputs into one folder (same relative paths), so global checks see main, preload and the CSP together. */
function stage(root: string, inputs: string[]): string {
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-electronegativity-"));
    for (const input of inputs) {
        const source = path.join(root, input);
        if (!fs.existsSync(source))
            throw new Error(`electronegativity: input ${input} does not exist under ${root}`);
        fs.cpSync(source, path.join(staging, input), {recursive: true});
    }
    return staging;
}

export function readExplanations(file: string = defaultExplanationsFile): Explanation[] {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as {explained?: unknown};
    if (!Array.isArray(parsed.explained))
        throw new Error(`${file}: expected {"explained": [{check, file, why}]}`);
    return parsed.explained.map((entry: Explanation, index: number) => {
        if (typeof entry.check !== "string" || typeof entry.file !== "string" || typeof entry.why !== "string" || entry.why.trim() === "")
            throw new Error(`${file}: entry ${index} needs check, file and why`);
        return entry;
    });
}

export async function runElectronegativity({root = repoRoot, inputs = defaultInputs, explanations = readExplanations()}: {
    root?: string, inputs?: string[], explanations?: Explanation[]
} = {}): Promise<ElectronegativityReport> {
    const run = loadRunner();
    const staging = stage(root, inputs);
    const requestsBefore = blockedRequests.length;
    const lang = process.env.LANG;
    process.env.LANG = "en-US";
    let result: RawResult;
    try {
        result = await run({input: staging, isRelative: true, excludeFromScan: excludedChecks});
    } finally {
        if (lang == null)
            delete process.env.LANG;
        else
            process.env.LANG = lang;
        fs.rmSync(staging, {recursive: true, force: true});
    }

    const findings: Finding[] = result.issues.map((issue) => ({
        check: issue.id,
        file: issue.file === "N/A" ? "N/A" : issue.file.split(path.sep).join("/").replace(/^\/+/, ""),
        line: issue.location.line,
        column: issue.location.column,
        severity: issue.severity.name ?? String(issue.severity.value),
        confidence: issue.confidence.name ?? String(issue.confidence.value),
        manualReview: issue.manualReview === true,
        description: issue.description ?? "",
        sample: issue.sample?.split("\n")[0]?.slice(0, 160) ?? null
    })).sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.check.localeCompare(b.check));

    const unexplained: Finding[] = [];
    const used = new Set<Explanation>();
    const groups = new Map<string, Finding[]>();
    for (const finding of findings) {
        const key = `${finding.check}\u0000${finding.file}`;
        groups.set(key, [...groups.get(key) ?? [], finding]);
    }
    for (const group of groups.values()) {
        const explanation = explanations.find((entry) => entry.check === group[0]!.check && entry.file === group[0]!.file);
        if (explanation == null) {
            unexplained.push(...group);
            continue;
        }
        used.add(explanation);
        unexplained.push(...group.slice(explanation.count ?? 1));
    }

    return {
        inputs,
        checks: {global: result.globalChecks, atomic: result.atomicChecks},
        findings,
        unexplained,
        stale: explanations.filter((entry) => !used.has(entry)),
        parseErrors: result.errors.filter((error) => !error.tolerable).map(({file, message}) => ({file, message})),
        blockedRequests: blockedRequests.slice(requestsBefore)
    };
}

export function reportPasses(report: ElectronegativityReport) {
    return report.unexplained.length === 0 && report.stale.length === 0 && report.parseErrors.length === 0;
}

export function formatReport(report: ElectronegativityReport): string {
    const line = (finding: Finding) => `  ${finding.check} ${finding.file}:${finding.line}:${finding.column} (${finding.severity}, ${finding.confidence})` +
        `${finding.sample != null && finding.sample !== "" ? `  ${finding.sample}` : ""}`;
    const lines = [
        `Electronegativity over ${report.inputs.join(", ")}: ${report.checks.atomic} atomic and ${report.checks.global} global checks, ` +
        `${report.findings.length} findings, ${report.findings.length - report.unexplained.length} explained.`
    ];
    if (report.unexplained.length > 0)
        lines.push("Unexplained findings (fix them, or explain them in security/electronegativity-explained.json):", ...report.unexplained.map(line));
    if (report.stale.length > 0)
        lines.push("Explanations that match no finding any more (review and remove them):",
            ...report.stale.map((entry) => `  ${entry.check} ${entry.file}`));
    if (report.parseErrors.length > 0)
        lines.push("Files the scanner could not parse:", ...report.parseErrors.map((error) => `  ${error.file}: ${error.message}`));
    return lines.join("\n");
}

if (process.argv[1] != null && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
    const report = await runElectronegativity();
    if (process.argv.includes("--json"))
        process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    else
        process.stdout.write(formatReport(report) + "\n");
    process.exitCode = reportPasses(report) ? 0 : 1;
}
