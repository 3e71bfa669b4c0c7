import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {chromium} from "playwright-core";
import {startWebMode} from "../test/helpers/startWebMode.js";
import {chromiumPath} from "../test/helpers/launchChromium.js";
import {repoRoot} from "../test/helpers/testModel.js";

// docs/images/cleanroom.png, the README's screenshot: web mode on a fresh home with the test model, one
// question answered, the Isolation panel beside it, taken in Debian's Chromium.
// `npm run screenshot [-- --model <gguf>] [-- --out <file.png>]`.
const flag = (name: string) => {
    const index = process.argv.indexOf(name);
    return index >= 0 ? process.argv[index + 1] : undefined;
};
const modelPath = path.resolve(flag("--model") ?? process.env.CLEANROOM_TEST_MODEL ?? path.join(repoRoot, "../shared/models/stories260K.gguf"));
const out = path.resolve(flag("--out") ?? path.join(repoRoot, "docs/images/cleanroom.png"));
if (!fs.existsSync(modelPath))
    throw new Error(`No model at ${modelPath}: give one with --model <gguf>.`);

const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-screenshot-"));
const web = await startWebMode(["--model", modelPath, "--db", path.join(home, "screenshot.db"), "--threads", "1", "--context-size", "2048"],
    {CLEANROOM_HOME: home, CLEANROOM_MODEL: ""});
const browser = await chromium.launch({executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]});
try {
    const page = await browser.newPage({viewport: {width: 1280, height: 760}, colorScheme: "light"});
    page.setDefaultTimeout(120_000);
    await page.goto(web.url);
    const composer = page.getByRole("textbox", {name: "Message"});
    await composer.and(page.locator(":enabled")).waitFor();
    await composer.fill("Tell me a story about a brave little dragon.");
    await composer.press("Enter");
    await page.getByRole("article", {name: "Assistant message"}).and(page.locator("[data-status='complete']")).waitFor();
    await page.getByRole("region", {name: "Isolation"}).getByText("Tokens used").waitFor();
    fs.mkdirSync(path.dirname(out), {recursive: true});
    await page.screenshot({path: out});
    process.stdout.write(`Wrote ${path.relative(process.cwd(), out)} (${Math.round(fs.statSync(out).size / 1024)} KiB)\n`);
} finally {
    await browser.close();
    await web.stop();
    fs.rmSync(home, {recursive: true, force: true});
}
