import net from "node:net";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import {testBuildScript} from "../helpers/testBuild.js";
import {observeCli, straceAvailable, type NetworkObservation} from "./helpers/observeNetwork.js";
import {SocketWatcher} from "./helpers/socketWatcher.js";

const modelPath = requireTestModel();
const controlImport = await testBuildScript("netControl");

function summary(observation: NetworkObservation) {
    return `guard attempts ${observation.guard.length}, /proc polls ${observation.sockets.polls} over ${observation.sockets.pidsSeen.length} process(es), ` +
        `inet sockets ${observation.sockets.inetSockets.length}, other sockets ${observation.sockets.otherSockets}, ` +
        (observation.strace == null ? "strace n/a" : `strace: ${observation.strace.tracedCalls} traced calls, ${observation.strace.networkCalls.length} network`);
}

/**
 * Claim: local conversations (model load, chat, scrub, delete) never open a network
 * connection. Three observers watch the core process: a JS preload that hooks every Node
 * networking API, a /proc poll of the sockets its process tree holds, and strace on the socket
 * system calls. Controls run the same observers on the same CLI with a preload that does
 * connect, to prove each observer would see a connection.
 */
describe.skipIf(modelPath == null || !SocketWatcher.supported())("network silence of local conversations", () => {
    const dir = tempDir("net");
    const database = path.join(dir, "cleanroom.db");
    const env = {...process.env, CLEANROOM_HOME: dir, CLEANROOM_MODEL: ""};
    let server: net.Server;
    let serverConnections = 0;
    let port = 0;

    beforeAll(async () => {
        server = net.createServer((socket) => {
            serverConnections++;
            socket.on("error", () => undefined);
            socket.resume();
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        port = (server.address() as net.AddressInfo).port;
    });
    afterAll(async () => {
        await new Promise((resolve) => server.close(resolve));
    });

    it("load + chat + scrub (one turn) and then delete: no attempt, no inet socket, no socket system call", async () => {
        const chat = await observeCli([
            "chat", "--model", modelPath!, "--db", database, "--threads", "1", "--context-size", "512",
            "--prompt", "Once upon a time", "--max-tokens", "64", "--temperature", "0", "--json"
        ], {env});
        console.info(`[network] chat: ${summary(chat)}`);
        expect(chat.exitCode, chat.stderr).toBe(0);
        const result = JSON.parse(chat.stdout) as {conversationId: string, status: string, isolation: {scrub: {verified: boolean}}};
        expect(result.status).toBe("complete");
        expect(result.isolation.scrub.verified).toBe(true);

        const removal = await observeCli(["conversations", "delete", result.conversationId, "--db", database, "--json"], {env});
        console.info(`[network] delete: ${summary(removal)}`);
        expect(removal.exitCode, removal.stderr).toBe(0);

        for (const observation of [chat, removal]) {
            expect(observation.guard, "JS-level network attempts").toEqual([]);
            expect(observation.sockets.inetSockets, "TCP/UDP/raw sockets held").toEqual([]);
            expect(observation.sockets.polls, "the /proc poll ran through the whole process life").toBeGreaterThan(10);
            if (observation.strace != null) {
                expect(observation.strace.networkCalls, "socket system calls for IPv4/IPv6/packet").toEqual([]);
                expect(observation.strace.tracedCalls, "strace saw the process (its execve at least)").toBeGreaterThan(0);
            }
        }
    }, 180_000);

    it("control, guard recording: the same CLI with a preload that connects is seen by all three observers", async () => {
        const before = serverConnections;
        const observation = await observeCli(["conversations", "list", "--db", database, "--json"], {
            env: {...env, CLEANROOM_NET_CONTROL_PORT: String(port)}, guardMode: "record", extraImports: [controlImport]
        });
        console.info(`[network] control (record): ${summary(observation)}`);
        expect(observation.exitCode, observation.stderr).toBe(0);
        expect(serverConnections - before).toBe(1);
        expect(observation.guard.map((attempt) => attempt.api)).toEqual(expect.arrayContaining(["net.Socket.connect", "dgram.createSocket", "dns.lookup"]));
        expect(observation.sockets.inetSockets.some((socket) => socket.table === "tcp")).toBe(true);
        if (straceAvailable()) {
            expect(observation.strace!.networkCalls.some((line) => /connect\(.*AF_INET/.test(line))).toBe(true);
            expect(observation.strace!.networkCalls.some((line) => /socket\(AF_INET, SOCK_DGRAM/.test(line))).toBe(true);
        }
    }, 120_000);

    it("control, guard blocking: the attempt is recorded and never reaches the server", async () => {
        const before = serverConnections;
        const observation = await observeCli(["conversations", "list", "--db", database, "--json"], {
            env: {...env, CLEANROOM_NET_CONTROL_PORT: String(port)}, guardMode: "block", extraImports: [controlImport]
        });
        expect(observation.exitCode, observation.stderr).toBe(0);
        expect(observation.guard.map((attempt) => attempt.api)).toContain("net.Socket.connect");
        // A connection of our own, made after the CLI exited, is accepted after any it made: once it is counted, nothing else came.
        const sentinel = net.connect(port, "127.0.0.1").on("error", () => undefined);
        await expect.poll(() => serverConnections - before).toBeGreaterThanOrEqual(1);
        sentinel.destroy();
        expect(serverConnections - before, "only our own connection reached the server").toBe(1);
    }, 120_000);
});
