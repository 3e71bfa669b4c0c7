import path from "node:path";
import {ESLint} from "eslint";
import {describe, expect, it} from "vitest";
import {repoRoot} from "../helpers/testModel.js";

// The project's own ESLint config, run on code that crosses the layers (never written to disk).
const eslint = new ESLint({cwd: repoRoot});

async function layeringProblems(file: string, code: string) {
    const [result] = await eslint.lintText(code, {filePath: path.join(repoRoot, file)});
    return result!.messages.filter((message) => message.ruleId === "cleanroom/layering").map((message) => message.message);
}

describe("the layering lint rule", () => {
    it("keeps Node, Electron and the node layer out of core/common", async () => {
        const problems = await layeringProblems("src/core/common/probe.ts",
            "import fs from \"node:fs\";\nimport {Core} from \"../node/Core.js\";\nimport {app} from \"electron\";\nexport const all = [fs, Core, app];\n");
        expect(problems).toEqual([
            expect.stringContaining("\"node:fs\""),
            expect.stringContaining("common code may not import node code"),
            expect.stringContaining("\"electron\"")
        ]);
    });

    it("lets the renderer reach core/common only", async () => {
        expect(await layeringProblems("renderer/src/probe.ts",
            "import {coreCalls} from \"../../src/core/common/api/index.js\";\nexport const calls = coreCalls;\n")).toEqual([]);
        expect(await layeringProblems("renderer/src/probe.ts",
            "import {Core} from \"../../src/core/node/Core.js\";\nexport const core = Core;\n")).toEqual([expect.stringContaining("renderer code may not import node code")]);
    });

    it("keeps the Electron main process off the core's Node side and native packages", async () => {
        expect(await layeringProblems("src/main/probe.ts",
            "import {Core} from \"../core/node/Core.js\";\nimport {getLlama} from \"node-llama-cpp\";\nexport const both = [Core, getLlama];\n")).toEqual([
            expect.stringContaining("main code may not import node code"),
            expect.stringContaining("\"node-llama-cpp\"")
        ]);
    });

    it("lets the Electron main process and the core share src/base (Node helpers), which imports neither", async () => {
        expect(await layeringProblems("src/main/probe.ts",
            "import {writeFileDurably} from \"../base/writeFileDurably.js\";\nexport const write = writeFileDurably;\n")).toEqual([]);
        expect(await layeringProblems("src/base/probe.ts",
            "import fs from \"node:fs\";\nimport {Core} from \"../core/node/Core.js\";\nimport {app} from \"electron\";\nexport const all = [fs, Core, app];\n")).toEqual([
            expect.stringContaining("base code may not import node code"),
            expect.stringContaining("\"electron\"")
        ]);
    });

    it("lets the CLI use the in-process core", async () => {
        expect(await layeringProblems("src/cli/probe.ts",
            "import {Core} from \"../core/node/Core.js\";\nimport {z} from \"zod\";\nexport const both = [Core, z];\n")).toEqual([]);
    });

    it("keeps the developer tools out of everything shipped, and lets them use the core and the CLI's helpers", async () => {
        expect(await layeringProblems("src/core/node/probe.ts",
            "import {SharedCloudSimulator} from \"../../../tools/cloudSim/SharedCloudSimulator.js\";\nexport const sim = SharedCloudSimulator;\n"))
            .toEqual([expect.stringContaining("node code may not import tools code")]);
        expect(await layeringProblems("src/cli/probe.ts",
            "import {auditEndpoint} from \"../../tools/endpointAudit/auditEndpoint.js\";\nexport const audit = auditEndpoint;\n"))
            .toEqual([expect.stringContaining("cli code may not import tools code")]);
        expect(await layeringProblems("tools/probe.ts",
            "import {Core} from \"../src/core/node/Core.js\";\nimport {reportError} from \"../src/cli/output.js\";\nexport const both = [Core, reportError];\n")).toEqual([]);
    });

    it("keeps the host adapters in their runtime's folder: the utility process entry may use the core, not Electron", async () => {
        expect(await layeringProblems("src/utility/probe.ts",
            "import {openCoreHost} from \"../core/node/host/openCoreHost.js\";\nimport {app} from \"electron\";\nexport const both = [openCoreHost, app];\n"))
            .toEqual([expect.stringContaining("\"electron\"")]);
    });
});
