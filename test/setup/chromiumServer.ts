// Runs before the e2e projects' files (vitest globalSetup, named by each e2e project): one Chromium for
// every file of the run, each of which connects and opens a fresh context of its own
// (openChromiumContext), instead of starting a browser per file. Both e2e projects share the one
// browser: the second would idle through the run (about 3 CPU-seconds) for gpuPanel.e2e at its end, and
// delay the first file by its start. Without Chromium nothing starts: each file's requireChromium
// skips, saying why (or fails, under CI).
import fs from "node:fs";
import type {TestProject} from "vitest/node";
import {chromiumPath, launchChromiumServer} from "../helpers/launchChromium.js";

type SharedServer = {endpoint: Promise<string>, users: number, close(): Promise<void>};

// vitest runs every project's global setup in its main process, each project's own copy of this module.
const sharedKey = Symbol.for("cleanroom.test.chromiumServer");

export default async function startChromiumServer(project: TestProject) {
    if (!fs.existsSync(chromiumPath))
        return;

    const global = globalThis as {[sharedKey]?: SharedServer};
    const shared = global[sharedKey] ??= launchShared();
    shared.users += 1;
    project.provide("chromiumEndpoint", await shared.endpoint);
    return async () => {
        shared.users -= 1;
        if (shared.users > 0)
            return;
        delete global[sharedKey];
        await shared.close();
    };
}

function launchShared(): SharedServer {
    const server = launchChromiumServer();
    return {endpoint: server.then((launched) => launched.wsEndpoint()), users: 0, close: async () => await (await server).close()};
}
