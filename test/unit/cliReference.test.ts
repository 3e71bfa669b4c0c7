import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {cliReferencePath, renderCliReference} from "../../tools/docs/cliReference.js";
import {repoRoot} from "../helpers/testModel.js";

describe("docs/cli-reference.md", () => {
    it("is every command's --help as the CLI prints it now (else run `npm run docs:cli`)", () => {
        const committed = fs.readFileSync(path.join(repoRoot, cliReferencePath), "utf8");
        expect(committed).toBe(renderCliReference());
        expect(committed).toContain("### `cleanroom models download`");
    });
});
