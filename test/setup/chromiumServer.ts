// Runs once per e2e project before its files (vitest globalSetup): one Chromium for every file, each
// of which connects and opens a fresh context of its own (openChromiumContext), instead of starting
// a browser per file. Without Chromium nothing starts: each file's requireChromium skips, saying why
// (or fails, under CI).
import fs from "node:fs";
import type {TestProject} from "vitest/node";
import {chromiumPath, launchChromiumServer} from "../helpers/launchChromium.js";

export default async function startChromiumServer(project: TestProject) {
    if (!fs.existsSync(chromiumPath))
        return;

    const server = await launchChromiumServer();
    project.provide("chromiumEndpoint", server.wsEndpoint());
    return async () => await server.close();
}
