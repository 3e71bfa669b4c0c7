import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/englishProse");

/**
 * English technical prose that tests calibrate on (characters per token, text that holds no
 * secret): frozen copies of this project's README.md and SECURITY.md as of commit c27090b, so that
 * editing the documentation never moves a test's figures.
 */
export function englishProseFiles(): Array<{label: string, text: string}> {
    return fs.readdirSync(dir).filter((file) => file.endsWith(".txt")).sort()
        .map((file) => ({label: `test/fixtures/englishProse/${file}`, text: fs.readFileSync(path.join(dir, file), "utf8")}));
}

/** The frozen README.md copy alone. */
export function englishReadmeProse(): string {
    return fs.readFileSync(path.join(dir, "readme-c27090b.txt"), "utf8");
}

/** Every file of the corpus, README first, joined by a blank line (the order the calibration was measured in). */
export function englishProse(): string {
    return [englishReadmeProse(), fs.readFileSync(path.join(dir, "security-c27090b.txt"), "utf8")].join("\n\n");
}
