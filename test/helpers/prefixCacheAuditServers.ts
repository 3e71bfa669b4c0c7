import {afterEach} from "vitest";
import {findLlamaServer, type RunningLlamaServer} from "./llamaServer.js";
import type {ServeProcess} from "./startServe.js";

/** The two API keys of the prefix-cache audit's tests against `cleanroom serve`: a victim and an attacker. */
export const victimKey = "victim-key-4417-aaaa";
export const attackerKey = "attacker-key-9999-bbbb";

/** llama-server, or null where it is not built (its tests then skip), except under CI=true, where that is a failure. */
export function llamaServerForAudit(): string | null {
    const binary = findLlamaServer();
    if (binary == null && process.env.CI === "true")
        throw new Error("llama-server is missing: .ci/run must build it with scripts/build-llama-cpp.sh");

    return binary;
}

/** A list the calling test file pushes its servers onto; each is stopped after the test that started it. */
export function serversStoppedAfterEach(): Array<ServeProcess | RunningLlamaServer> {
    const running: Array<ServeProcess | RunningLlamaServer> = [];
    afterEach(async () => {
        await Promise.all(running.splice(0).map(async (server) => "stop" in server ? await server.stop() : await server.close()));
    });
    return running;
}
