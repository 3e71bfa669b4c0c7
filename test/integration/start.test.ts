import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {startWebMode, type WebMode} from "../helpers/startWebMode.js";

// `npm start` on a machine without the Electron binary (this one: its download host is
// unreachable, and npm install never fetches it).
const running: WebMode[] = [];
afterEach(async () => {
    await Promise.all(running.splice(0).map((web) => web.stop()));
});

async function closedPort() {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const {port} = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}

async function npmStart(env: NodeJS.ProcessEnv) {
    const web = await startWebMode(["--no-model", "--no-open"], env, 240_000, "start");
    running.push(web);
    return web;
}

async function servesTheApp(url: string) {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("<div id=\"root\"></div>");
}

describe("npm start without the Electron binary", () => {
    it("without a display: says so in one line, then serves web mode", async () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-start-"));
        const web = await npmStart({CLEANROOM_HOME: home, DISPLAY: "", WAYLAND_DISPLAY: ""});

        expect(web.linesBeforeUrl.filter((line) => line.trim() !== "")).toEqual([
            "Desktop app unavailable (no display is available): starting web mode instead."
        ]);
        await servesTheApp(web.url);
    });

    it("with a display: tries to fetch Electron once, says why it failed in one line, serves web mode, and does not retry at the next start", async () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-start-"));
        // A mirror that refuses connections stands for a machine that cannot reach Electron's host.
        const env = {CLEANROOM_HOME: home, DISPLAY: ":99", ELECTRON_MIRROR: `http://127.0.0.1:${await closedPort()}/`};

        const first = await npmStart(env);
        const firstLines = first.linesBeforeUrl.filter((line) => line.trim() !== "");
        expect(firstLines[0]).toMatch(/^Fetching the Electron binary/);
        expect(firstLines).toHaveLength(2);
        expect(firstLines[1]).toMatch(/^Desktop app unavailable \(the Electron binary could not be fetched: .*ECONNREFUSED.*npm run desktop:install.*\): starting web mode instead\.$/);
        await servesTheApp(first.url);
        await first.stop();

        const second = await npmStart(env);
        const secondLines = second.linesBeforeUrl.filter((line) => line.trim() !== "");
        expect(secondLines).toHaveLength(1);
        expect(secondLines[0]).toMatch(/could not be fetched at \d{4}-\d\d-\d\dT.*`npm run desktop:install` tries again/);
        await servesTheApp(second.url);
    });
});
